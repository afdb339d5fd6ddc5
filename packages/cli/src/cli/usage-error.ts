/**
 * How the command fails: one line on stderr, never a stack trace, and an exit code that says whose
 * fault it was (0 ok, 1 a ZooKeeper error such as NoNode or NoAuth, or no connection; 2 bad usage).
 */
import { AbortError, ClosedError, InvalidPathError, KeeperError, TenureError, TimeoutError } from '@tenure/client';

export const EXIT_OK = 0;
export const EXIT_ZOOKEEPER = 1;
export const EXIT_USAGE = 2;

/** Bad usage: an unknown command or option, a missing argument, a malformed value. Exit code 2. */
export class UsageError extends TenureError {
  override name = 'UsageError';
  constructor(message = 'bad usage', options?: { cause?: unknown }) {
    super('USAGE', message, options);
  }
}

/** A failure that is neither usage nor ZooKeeper's answer (a file that cannot be read, ...). Exit code 1. */
export class CommandError extends TenureError {
  override name = 'CommandError';
  constructor(message = 'the command failed', options?: { cause?: unknown }) {
    super('COMMAND_FAILED', message, options);
  }
}

/** ZooKeeper's name of an error: `NoNode`, `NoAuth`, `BadVersion`, ... (the class name without `Error`). */
export function keeperName(err: KeeperError): string {
  const fromClass = err.name.endsWith('Error') && err.name !== 'KeeperError' ? err.name.slice(0, -'Error'.length) : null;
  return fromClass ?? err.codeName;
}

/** The exit code, the error's name (`NoNode`, `UsageError`, `TimeoutError`, ...) and the one line to print for `err`. */
export function describeError(err: unknown): { code: number; message: string; name: string } {
  if (err instanceof UsageError || err instanceof InvalidPathError) return { code: EXIT_USAGE, message: err.message, name: 'UsageError' };
  if (err instanceof KeeperError) {
    // The KeeperError message is `NONODE: no node (/x)`; show ZooKeeper's CamelCase name instead.
    const detail = err.message.replace(/^[A-Z_]+(\(-?\d+\))?: /, '');
    const name = keeperName(err);
    return { code: EXIT_ZOOKEEPER, message: `${name}: ${detail}`, name };
  }
  if (err instanceof TimeoutError || err instanceof ClosedError || err instanceof AbortError)
    return { code: EXIT_ZOOKEEPER, message: err.message, name: err.name };
  if (err instanceof Error) return { code: EXIT_ZOOKEEPER, message: err.message.split('\n')[0]!, name: err.name };
  return { code: EXIT_ZOOKEEPER, message: String(err), name: 'Error' };
}
