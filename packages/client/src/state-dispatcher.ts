/**
 * Delivers connection states to listeners in order, never dropping one.
 *
 * Curator keeps a bounded queue and drops the oldest state when it fills; here every state is kept.
 * A listener that causes another state change (closing the client, say) does not see the new state
 * before every listener has seen the current one: states are queued and drained one at a time.
 */
import { ConnectionState, isConnectedState } from './connection-state.js';
import { stateChannel, type StateMessage } from './diagnostics.js';
import type { Logger } from './logger.js';

export class StateDispatcher {
  private current: ConnectionState | null = null;
  private initialConnectSent = false;
  private readonly queue: ConnectionState[] = [];
  private draining = false;
  private readonly observers = new Set<(state: ConnectionState) => void>();

  constructor(
    private readonly deliver: (state: ConnectionState) => void,
    private readonly logger: Logger,
  ) {}

  /** The latest state posted (listeners may still be receiving it), null before the first connection. */
  get state(): ConnectionState | null {
    return this.current;
  }

  get connectedOnce(): boolean {
    return this.initialConnectSent;
  }

  /** A connection is up: READ_ONLY for a read-only server, CONNECTED the first time, RECONNECTED after. */
  connected(readOnly: boolean, sessionId = 0n): void {
    if (readOnly) return this.post(ConnectionState.READ_ONLY, sessionId);
    if (!this.initialConnectSent) {
      this.initialConnectSent = true;
      return this.post(ConnectionState.CONNECTED, sessionId);
    }
    this.post(ConnectionState.RECONNECTED, sessionId);
  }

  /** The connection is gone; reported only when we were connected. */
  suspended(sessionId = 0n): void {
    if (isConnectedState(this.current)) this.post(ConnectionState.SUSPENDED, sessionId);
  }

  /** `sessionId` is the session lost (every state names its session for `tenure:client:state`). */
  lost(sessionId = 0n): void {
    if (this.current !== null && this.current !== ConnectionState.LOST) this.post(ConnectionState.LOST, sessionId);
  }

  /** Called after listeners have received each state (used by waitForState). */
  observe(fn: (state: ConnectionState) => void): () => void {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  private post(state: ConnectionState, sessionId: bigint): void {
    const previous = this.current;
    if (state === previous) return;
    this.current = state;
    this.logger.info({ state }, `connection state ${state}`);
    if (stateChannel.hasSubscribers) stateChannel.publish({ state, previous, sessionId } satisfies StateMessage);
    this.queue.push(state);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let s = this.queue.shift(); s !== undefined; s = this.queue.shift()) {
        try {
          this.deliver(s);
        } catch (err) {
          this.logger.error({ err, state: s }, 'a stateChanged listener threw');
        }
        for (const fn of [...this.observers]) fn(s);
      }
    } finally {
      this.draining = false;
    }
  }
}
