/** A pino-compatible logger. The client is silent unless one is injected. */
type LogFn = {
  (obj: object, msg?: string, ...args: unknown[]): void;
  (msg: string, ...args: unknown[]): void;
};

export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child?(bindings: Record<string, unknown>): Logger;
}

const noop = (): void => {};

export const silentLogger: Logger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/** A child logger when the logger supports it, otherwise the logger itself. */
export function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  return typeof logger.child === 'function' ? logger.child(bindings) : logger;
}
