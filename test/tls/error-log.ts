/** A pino-shaped logger that keeps the messages of its error lines: the TLS tests count refusals in them. */
export function recordingLogger() {
  const errors: string[] = [];
  const noop = (): void => {};
  const logger = {
    error: (_o: unknown, msg?: string) => errors.push(msg ?? ''),
    warn: noop,
    info: noop,
    debug: noop,
    trace: noop,
    fatal: noop,
    child: () => logger,
  };
  return { logger, errors };
}
