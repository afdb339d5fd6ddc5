/**
 * The client's diagnostics channels (node:diagnostics_channel), for tracing, metrics and logs
 * without a dependency. Both cost one `hasSubscribers` check while nobody subscribes.
 * - `tenure:client:request`: a TracingChannel around every operation of a Client (start, end,
 *   asyncStart, asyncEnd, error), with `{ op, path, server, sessionId, size }`, then `result` or
 *   `error` and `code`. Its start event fires synchronously in the caller, so a subscriber sees the
 *   caller's async context (its active span) there.
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
  /** The server (host:port) of the connection when it started, then of the one that answered; null while none. */
  server?: string | null;
  /** The session when it started, then when it settled; 0n while there is none. */
  sessionId?: bigint;
  /** Bytes of node data it carried, where known: written (create, setData) or read (getData). */
  size?: number;
}

/** Where a traced operation reads the server and session it ran on (a ClientCore). */
export interface RequestSource {
  readonly session: { readonly connectedServer: string | null; readonly sessionId: bigint };
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

/** The TracingChannel `name`, or a silent one without diagnostics_channel: recipes publish theirs through it. */
export function tracingChannelOf<M extends object>(name: string): diagnostics_channel.TracingChannel<unknown, M> {
  return channels?.tracingChannel<unknown, M>(name) ?? (silentChannel as unknown as diagnostics_channel.TracingChannel<unknown, M>);
}

/** The plain channel `name`, or a silent one without diagnostics_channel. */
export function channelOf(name: string): diagnostics_channel.Channel {
  return channels?.channel(name) ?? (silentChannel as unknown as diagnostics_channel.Channel);
}

export const requestChannel: diagnostics_channel.TracingChannel<unknown, RequestMessage> =
  tracingChannelOf<RequestMessage>(REQUEST_CHANNEL);
export const stateChannel: diagnostics_channel.Channel = channelOf(STATE_CHANNEL);

/** Runs `run` inside the request channel's events. Call only when `requestChannel.hasSubscribers`. */
export function traced<T>(
  op: OperationName,
  path: string | undefined,
  run: () => Promise<T>,
  source?: RequestSource,
  size?: number,
): Promise<T> {
  return requestChannel.tracePromise(run, new TracedRequest(op, path, source, size));
}

/** tracePromise sets `error`; setting it fills in `code` too, so the error hook already sees it. */
class TracedRequest implements RequestMessage {
  code?: string = undefined;
  server?: string | null;
  sessionId?: bigint;
  #result: unknown = undefined;
  #error: unknown = undefined;

  constructor(
    readonly op: OperationName,
    readonly path: string | undefined,
    private readonly source: RequestSource | undefined,
    public size: number | undefined,
  ) {
    this.#noteSession();
  }

  get result(): unknown {
    return this.#result;
  }

  set result(value: unknown) {
    this.#result = value;
    this.#noteSession();
    if (this.op === 'getData') this.size = (value as { data?: Buffer } | undefined)?.data?.length ?? this.size;
  }

  get error(): unknown {
    return this.#error;
  }

  set error(err: unknown) {
    this.#error = err;
    this.code = err instanceof KeeperError ? err.codeName : err instanceof Error ? err.name : typeof err;
    this.#noteSession();
  }

  #noteSession(): void {
    if (!this.source) return;
    const session = this.source.session;
    // The session may have moved while the op ran; an op that ended with no connection keeps the last server.
    this.server = session.connectedServer ?? this.server ?? null;
    this.sessionId = session.sessionId;
  }
}

/** The byte length of node data as create/setData take it (undefined for what they would refuse). */
export function dataSize(data: unknown): number | undefined {
  if (data === undefined || data === null) return 0;
  if (typeof data === 'string') return Buffer.byteLength(data, 'utf8');
  return data instanceof Uint8Array ? data.byteLength : undefined;
}
