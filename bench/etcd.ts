/**
 * ZooKeeper's operations on etcd: getData, create and an uncontended Mutex acquire/release cycle,
 * over @tenure/etcd's in-process etcdTransport and over tenure-server on etcd (`--etcd`), beside the
 * same on Apache ZooKeeper 3.8 (TestingServer), in one run; and the `etcd3` package's own Lock on the
 * same etcd as the etcd-native peer. Reports ops/s (median of rounds) and, for etcdTransport, etcd
 * round trips per ZooKeeper operation, counted at its gRPC calls.
 *
 *   npx tsx bench/etcd.ts [--seconds 2] [--rounds 3]
 *
 * One etcd member (TestingEtcd: free ports, fsync on) on this machine; etcd's fsync'd Txn is a few
 * ms here against ZooKeeper's ~1 ms write, so compare each etcd form with the etcd3 Lock, not with
 * ZooKeeper.
 */
import { arg, median, perSecond } from './case-rounds.js';
import { rerunFromSource } from './run-from-source.js';

rerunFromSource(import.meta.url);

const { createClient } = await import('@tenure/client');
const { Mutex } = await import('@tenure/locks');
const { etcdTransport } = await import('@tenure/etcd');
const { TestingEtcd, TestingServer, TenureServerProcess, realZooKeeper } = await import('@tenure/testing');
const { Etcd3 } = await import('etcd3');

type Client = Awaited<ReturnType<typeof createClient>>;

const SECONDS = Number(arg('seconds', '2'));
const ROUNDS = Number(arg('rounds', '3'));

/** ops/s of `op`, median of ROUNDS rounds of SECONDS after a warm-up round. */
async function rate(op: () => Promise<unknown>): Promise<number> {
  const round = async (): Promise<number> => {
    let n = 0;
    const start = performance.now();
    const end = start + SECONDS * 1000;
    while (performance.now() < end) {
      await op();
      n++;
    }
    return n / ((performance.now() - start) / 1000);
  };
  await round();
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round());
  return median(rounds);
}

let seq = 0;
async function zkCases(c: Client, tag: string): Promise<Record<string, number>> {
  const base = `/bench-${tag}-${process.pid}`;
  await c.create(base, 'x');
  const mutex = new Mutex(c, `${base}/lock`);
  await (await mutex.acquire()).release();
  const out = {
    getData: await rate(() => c.getData(base)),
    create: await rate(() => c.create(`${base}/n${++seq}`, 'x')),
    mutex: await rate(async () => (await mutex.acquire()).release()),
  };
  await mutex.close();
  return out;
}

const etcd = await TestingEtcd.start();
const results: Record<string, Record<string, number>> = {};
const trips: Record<string, number> = {};
try {
  // etcdTransport, in-process, with round trips counted.
  {
    const t = etcdTransport(etcd.endpoint, { prefix: '/bench' });
    const c = createClient({ transport: t, sessionTimeoutMs: 30_000 });
    await c.start();
    const total = (): number => Object.entries(t.etcdCalls()).reduce((n, [m, k]) => (m === 'LeaseKeepAlive' ? n : n + k), 0);
    const count = async (op: () => Promise<unknown>, n = 50): Promise<number> => {
      const before = total();
      for (let i = 0; i < n; i++) await op();
      return (total() - before) / n;
    };
    await c.create('/trips', 'x');
    const m = new Mutex(c, '/trips-lock');
    await (await m.acquire()).release();
    trips['getData'] = await count(() => c.getData('/trips'));
    trips['create'] = await count(() => c.create(`/trips/n${++seq}`, 'x'));
    trips['mutex'] = await count(async () => (await m.acquire()).release());
    await m.close();
    results['etcdTransport (in-process)'] = await zkCases(c, 'inproc');
    await c.close();
    await t.close();
  }
  // tenure-server on etcd, over ZooKeeper's wire protocol.
  {
    const server = await TenureServerProcess.start({ args: ['--etcd', etcd.endpoint, '--etcd-prefix', '/bench-fe'] });
    const c = createClient({ connectString: server.connectString, sessionTimeoutMs: 30_000 });
    await c.start();
    results['tenure-server on etcd'] = await zkCases(c, 'fe');
    await c.close();
    await server.stop();
  }
  // The etcd-native peer: etcd3's Lock on the same etcd.
  {
    const e = new Etcd3({ hosts: etcd.endpoint });
    results['etcd3 Lock (native)'] = { mutex: await rate(async () => (await e.lock('/bench-etcd3-lock').ttl(30).acquire()).release()) };
    e.close();
  }
  // ZooKeeper 3.8.
  if (realZooKeeper().available) {
    const zk = await TestingServer.start();
    const c = createClient({ connectString: zk.connectString, sessionTimeoutMs: 30_000 });
    await c.start();
    results['ZooKeeper 3.8'] = await zkCases(c, 'zk');
    await c.close();
    await zk.close();
  }
} finally {
  await etcd.close();
}

const cols = ['getData', 'create', 'mutex'] as const;
console.log(`| target | ${cols.join(' | ')} |`);
console.log(`| --- | ${cols.map(() => '---').join(' | ')} |`);
for (const [name, r] of Object.entries(results)) console.log(`| ${name} | ${cols.map((k) => perSecond(r[k])).join(' | ')} |`);
console.log(`\netcd round trips per operation (etcdTransport): ${cols.map((k) => `${k} ${trips[k]!.toFixed(2)}`).join(', ')}`);
const etcd3Rate = results['etcd3 Lock (native)']?.['mutex'];
const ours = results['etcdTransport (in-process)']?.['mutex'];
if (etcd3Rate !== undefined && ours !== undefined)
  console.log(`Mutex cycle, etcdTransport / etcd3 Lock: ${(ours / etcd3Rate).toFixed(2)}x`);
