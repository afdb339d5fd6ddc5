/**
 * Pacing after refused TLS handshakes (TlsError from the transport). A refused certificate is a
 * configuration problem, not a connection loss: trying again at the reconnect pace would only
 * repeat it. Once every host has refused in a row (a round), the session reports the refusal
 * (start() rejects, a running client emits `tlsError`) and waits 2 s, doubling to 60 s, before
 * the next round. `updateTls()` ends the wait at once, and a connection that gets through resets
 * the count.
 */
import type { TlsError } from '@tenure/protocol';
import type { Clock } from '@tenure/protocol';
import { sleep } from './wait-scope.js';

const FIRST_PAUSE_MS = 2000;
const MAX_PAUSE_MS = 60_000;

export class TlsRefusals {
  private inARow = 0;
  private rounds = 0;
  private wake = new AbortController();

  /** Counts a refusal; true when every one of `hosts` has now refused in a row. */
  refused(hosts: number): boolean {
    this.inARow++;
    if (this.inARow < hosts) return false;
    this.inARow = 0;
    this.rounds++;
    return true;
  }

  /** Anything other than a refusal happened (a connection, a plain network failure). */
  reset(): void {
    this.inARow = 0;
    this.rounds = 0;
  }

  /** Waits before the next round; ends early on `wakeUp()`, rejects with AbortError on `signal`. */
  async pause(clock: Clock, signal: AbortSignal): Promise<void> {
    const ms = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.min(this.rounds - 1, 10));
    const wake = this.wake.signal;
    try {
      await sleep(clock, ms, AbortSignal.any([signal, wake]));
    } catch (err) {
      if (signal.aborted || !wake.aborted) throw err;
    }
  }

  /** New TLS options: the next round starts now. */
  wakeUp(): void {
    this.wake.abort();
    this.wake = new AbortController();
    this.inARow = 0;
  }
}

/** What the session tells its owner about refusals. */
export type TlsRefusalListener = (error: TlsError) => void;
