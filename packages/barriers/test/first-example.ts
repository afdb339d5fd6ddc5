import { createEmbeddedServer } from '@tenure/server';
import { createClient } from '@tenure/client';
import { DistributedBarrier, DoubleBarrier } from '@tenure/barriers';

const server = createEmbeddedServer();
const workers = await Promise.all(
  ['a', 'b', 'c'].map(async (name) => {
    const client = createClient({ transport: server.transport(), sessionTimeoutMs: 10_000 });
    await client.start();
    return { name, client };
  }),
);

// A gate: every worker waits until the coordinator removes it.
const gate = new DistributedBarrier(workers[0]!.client, '/jobs/nightly/gate');
await gate.setBarrier();
setTimeout(() => void gate.removeBarrier(), 100);

await Promise.all(
  workers.map(async ({ name, client }) => {
    await new DistributedBarrier(client, '/jobs/nightly/gate').waitOnBarrier({ timeoutMs: 10_000 });
    // Enter together, work, leave together.
    await using barrier = new DoubleBarrier(client, '/jobs/nightly/run', 3);
    await barrier.enter({ timeoutMs: 10_000 }); // resolves once all 3 are in
    console.log(`${name} is working`);
    await barrier.leave({ timeoutMs: 10_000 }); // resolves once all 3 have left
  }),
);

await gate.close();
for (const { client } of workers) await client.close();
await server.close();
console.log('all done');
