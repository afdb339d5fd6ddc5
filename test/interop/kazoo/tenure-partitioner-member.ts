/**
 * A Tenure SetPartitioner member in its own process, for tests that SIGKILL it (no close, no
 * closeSession: its session expires on the server) or let it close.
 *
 *   node --import tsx tenure-partitioner-member.ts <connectString> <sessionTimeoutMs> <path> <identifier> <timeBoundaryMs> <items JSON>
 *
 * Prints {"session": "<hex>"} once connected, then {"state": <allocation>, "items": [...]} per
 * allocation event; on stdin EOF it closes the partitioner and the client, prints {"left": true}
 * and exits 0.
 */
import { createClient } from '@tenure/client';
import { SetPartitioner } from '@tenure/group';

const [connectString, timeout, path, identifier, boundary, items] = process.argv.slice(2);
const say = (o: unknown): boolean => process.stdout.write(JSON.stringify(o) + '\n');
const client = createClient({ connectString: connectString!, sessionTimeoutMs: Number(timeout) });
await client.start();
say({ session: client.sessionId.toString(16) });
const partitioner = new SetPartitioner(client, path!, JSON.parse(items!) as string[], { identifier, timeBoundaryMs: Number(boundary) });
partitioner.on('allocation', (state, mine) => say({ state, items: [...mine].sort() }));
partitioner.on('error', (err) => say({ error: err.message }));
await partitioner.start();
say({ state: partitioner.allocation, items: [] });
process.stdin.resume();
process.stdin.on('end', () => {
  void (async () => {
    await partitioner.close();
    await client.close();
    say({ left: true });
    process.exit(0);
  })();
});
