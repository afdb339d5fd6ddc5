/** Test harness: an embedded server with a small tick, clients that record their states, polling. */
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import type { Client } from '@tenure/client';
import { connectRecording, nextEvent, startTestServer, type RecordedClient } from '@tenure/testing';
import type { GroupMember, Membership } from '../src/index.js';

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

/** Resolves once `done(member's view)` holds: now, or at the member's next 'change' that makes it hold. */
export async function untilView(member: GroupMember, done: (m: Membership) => boolean, timeoutMs = 5000): Promise<void> {
  const changed = nextEvent<Membership>(member, 'change', (m) => done(m), { timeoutMs });
  if (done(member.getCurrentMembers())) {
    changed.catch(() => {});
    return;
  }
  await changed;
}

/**
 * Resolves once `done()` holds, checked now and again at every change under `path` that a
 * persistent recursive watch of `observer` reports (the watch is closed after). For conditions on
 * the server's nodes (who owns a member node) that no recipe event announces.
 */
export async function untilChangedUnder(
  observer: Client,
  path: string,
  done: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const watch = await observer.addWatch(path, { recursive: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void watch.close();
  }, timeoutMs);
  try {
    if (await done()) return;
    for await (const _event of watch) if (await done()) return;
    throw new Error(timedOut ? `timed out after ${timeoutMs} ms waiting for a change under ${path}` : `the watch on ${path} ended`);
  } finally {
    clearTimeout(timer);
    await watch.close();
  }
}

/** A round trip on each client: whatever each sent before (a create racing a close) has been served. */
export async function roundTrip(...clients: Client[]): Promise<void> {
  await Promise.all(clients.map((c) => c.sync('/')));
}
