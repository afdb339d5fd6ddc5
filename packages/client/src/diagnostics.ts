/**
 * The client's diagnostics channels (node:diagnostics_channel), for tracing, metrics and logs
 * without a dependency. Both cost one `hasSubscribers` check while nobody subscribes.
 * - `tenure:client:request`: a TracingChannel around every operation of a Client (start, end,
 *   asyncStart, asyncEnd, error), with `{ op, path }`, then `result` or `error` and `code`.
 * - `tenure:client:state`: every connection state change, `{ state, previous, sessionId }`.
 * Where there is no diagnostics_channel (browsers), both are silent stand-ins: `hasSubscribers`
 * stays false, so nothing is ever published or traced.
 */
import type diagnostics_channel from 'node:diagnostics_channel';
import { KeeperError } from '@tenure/protocol';
import type { ConnectionState } from './connection-state.js';
import { nodeBuiltin } from './node-builtins.js';

export const REQUEST_CHANNEL = 'tenure:client:request';
export const STATE_CHANNEL = 'tenure:client:state';

/** The operations `tenure:client:request` traces: Client's method names ('transaction' is commit()). */
export type OperationName =
  | 'exists'
  | 'getData'
  | 'getChildren'
  | 'getACL'
  | 'getAllChildrenNumber'
  | 'getEphemerals'
  | 'multiRead'
  | 'whoAmI'
  | 'sync'
  | 'create'
  | 'delete'
  | 'setData'
  | 'setACL'
  | 'transaction'
  | 'addAuth'
  | 'addWatch'
  | 'removeWatches'
  | 'getConfig'
  | 'reconfig';

/** The message of every `tenure:client:request` event; one object per operation, filled in as it goes. */
export interface RequestMessage {
  op: OperationName;
  /** The path as the caller gave it (in its namespace); undefined for whoAmI, multiRead, transaction, addAuth. */
  path: string | undefined;
  /** Once it resolved (asyncStart, asyncEnd). */
  result?: unknown;
  /** Once it rejected (error, asyncStart, asyncEnd). */
  error?: unknown;
  /** With `error`: the KeeperError's code name ('NONODE', 'CONNECTIONLOSS'), else the error's name ('AbortError'). */
  code?: string;
}

/** The message of `tenure:client:state`. */
export interface StateMessage {
  state: ConnectionState;
  /** null for the first CONNECTED. */
  previous: ConnectionState | null;
  /** The session the state is about (for LOST: the one lost). */
  sessionId: bigint;
}

const channels = nodeBuiltin('node:diagnostics_channel');

/** A channel nobody can subscribe to, for runtimes without diagnostics_channel. */
const silentChannel = {
  hasSubscribers: false,
  subscribe(): void {},
  unsubscribe(): boolean {
    return false;
  },
  publish(): void {},
  tracePromise<T>(run: () => Promise<T>): Promise<T> {
    return run();
  },
};

export const requestChannel: diagnostics_channel.TracingChannel<unknown, RequestMessage> =
  channels?.tracingChannel(REQUEST_CHANNEL) ?? (silentChannel as unknown as diagnostics_channel.TracingChannel<unknown, RequestMessage>);
export const stateChannel: diagnostics_channel.Channel =
  channels?.channel(STATE_CHANNEL) ?? (silentChannel as unknown as diagnostics_channel.Channel);

/** Runs `run` inside the request channel's events. Call only when `requestChannel.hasSubscribers`. */
export function traced<T>(op: OperationName, path: string | undefined, run: () => Promise<T>): Promise<T> {
  return requestChannel.tracePromise(run, new TracedRequest(op, path));
}

/** tracePromise sets `error`; setting it fills in `code` too, so the error hook already sees it. */
class TracedRequest implements RequestMessage {
  result?: unknown = undefined;
  code?: string = undefined;
  #error: unknown = undefined;

  constructor(
    readonly op: OperationName,
    readonly path: string | undefined,
  ) {}

  get error(): unknown {
    return this.#error;
  }

  set error(err: unknown) {
    this.#error = err;
    this.code = err instanceof KeeperError ? err.codeName : err instanceof Error ? err.name : typeof err;
  }
}
