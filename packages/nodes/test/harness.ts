/** Test harness: an embedded server with a small tick, clients that record their states, polling. */
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import type { Client, Clock } from '@tenure/client';
import { connectRecording, startTestServer, type RecordedClient } from '@tenure/testing';

export const TICK_MS = 100;

export const startServer = (options: EmbeddedServerOptions = {}): EmbeddedServer => startTestServer({ tickMs: TICK_MS, ...options });

export type Recorded = RecordedClient;

/** A started client on `server` (or on `connectString`) whose state events are recorded. */
export const connect = connectRecording;

export { eventually, sleep } from '@tenure/testing';
/** Watch entries the server holds for the client's session (0 when none). */
export function serverWatches(server: EmbeddedServer, client: Client): number {
  return server.watchCounts().get(client.sessionId) ?? 0;
}

/** The system clock, counting the timers set on it that have neither fired nor been cleared. */
export function countingClock(): Clock & { readonly live: number } {
  const live = new Set<unknown>();
  return {
    now: () => performance.now(),
    setTimeout(fn, ms) {
      const h = setTimeout(() => (live.delete(h), fn()), ms);
      live.add(h);
      return h;
    },
    clearTimeout(h) {
      live.delete(h);
      clearTimeout(h as ReturnType<typeof setTimeout>);
    },
    get live() {
      return live.size;
    },
  };
}
