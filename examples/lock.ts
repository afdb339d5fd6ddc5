/**
 * @tenure/locks on the embedded server: three workers take turns on one mutex, pass its fencing
 * token to the store they write, and stop the moment their lease is no longer safe.
 *
 *   npm run build && node examples/dist/lock.js
 */
import { createClient, type Client } from '@tenure/client';
import { Mutex, ReadWriteLock, Semaphore, TimeoutError, type Lease } from '@tenure/locks';
import { createEmbeddedServer } from '@tenure/server';

const server = createEmbeddedServer({ tickMs: 100 });
const open = async (): Promise<Client> => {
  const client = createClient({ transport: server.transport(), sessionTimeoutMs: 1500 });
  await client.start();
  return client;
};

/** A store that refuses writes carrying an older token than one it has seen (fencing). */
const store = {
  highest: 0n,
  writes: [] as string[],
  write(token: bigint, what: string): void {
    if (token < this.highest) throw new Error(`stale token ${token} < ${this.highest}: refused`);
    this.highest = token;
    this.writes.push(what);
  },
};

const workers = await Promise.all([open(), open(), open()]);

// 1. Three workers, one mutex. `await using` releases the lease at the end of the block.
await Promise.all(
  workers.map(async (client, i) => {
    const mutex = new Mutex(client, '/locks/orders', { data: `worker-${i}` });
    for (let round = 0; round < 2; round++) {
      await using lease = await mutex.acquire({ timeoutMs: 5000 });
      console.log(`worker ${i} holds ${lease.path.split('/').pop()} with fencing token ${lease.fencingToken}`);
      store.write(lease.fencingToken, `worker ${i} round ${round}`);
    }
  }),
);
console.log(`the store accepted ${store.writes.length} writes, each with a larger token`);

// 2. A wait that gives up leaves nothing behind.
const [a, b] = workers as [Client, Client, Client];
const held = await new Mutex(a, '/locks/report').acquire();
try {
  await new Mutex(b, '/locks/report').acquire({ timeoutMs: 200 });
} catch (err) {
  if (err instanceof TimeoutError)
    console.log(`worker 1 gave up after 200 ms; nodes under /locks/report: ${(await b.getChildren('/locks/report')).children.length}`);
}

// 3. lease.signal: a partitioned holder learns it lost the lock before anyone else gets it.
const next = new Mutex(b, '/locks/report').acquire();
const lostAt = new Promise<number>((resolve) => held.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
server.silence(a.sessionId, 3000); // the network between worker 0 and the server goes quiet
const successor: Lease = await next;
console.log(
  `worker 0's signal aborted (${(held.signal.reason as Error).message}) ${Math.round(performance.now() - (await lostAt))} ms before worker 1 acquired; ` +
    `new token ${successor.fencingToken} > ${held.fencingToken}`,
);
await successor.release();

// 4. A read-write lock and a semaphore, Curator's layouts.
const rw = new ReadWriteLock(b, '/locks/catalog');
const readers = await Promise.all([rw.readLock.acquire(), new ReadWriteLock(workers[2]!, '/locks/catalog').readLock.acquire()]);
console.log(`two readers share /locks/catalog: ${readers.map((r) => r.path.split('-').slice(-1)[0]).join(', ')}`);
for (const r of readers) await r.release();
const pool = new Semaphore(b, '/locks/pool', 2);
const leases = await pool.acquire(2);
console.log(
  `semaphore /locks/pool: ${leases.length} of 2 leases taken, each with its own token (${leases.map((l) => l.fencingToken).join(', ')})`,
);
for (const l of leases) await l.release();

await Promise.all(workers.map((c) => c.close()));
await server.close();
