/** Test harness: an embedded server with a small tick, clients that record their states, polling. */
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import type { Client } from '@tenure/client';
import { connectRecording, nextEvent, startTestServer, type RecordedClient } from '@tenure/testing';
import type { GroupMember, Membership } from '../src/index.js';
export { untilTree as untilChangedUnder, roundTrip } from '@tenure/testing';

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
