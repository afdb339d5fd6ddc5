/**
 * Leader failover: Tenure's LeaderLatch against Apache Curator's (Debian's libcurator-recipes-java
 * 5.4, compiled here from bench/java/CuratorLeaderBench.java), on one real ZooKeeper in one run.
 *
 *   npx tsx bench/leader.ts [--rounds 20] [--warmup 5] [--loss-rounds 6] [--session 2000]
 *
 * Two cases, two participants each (own sessions), median of the rounds:
 * - close: from the leader's close() call to the follower's isLeader. Target: one round trip plus
 *   the notification (the follower's watch fires, it lists the children, it leads).
 * - session loss: from the moment the leader's connection goes silent (a FaultProxy blackholes it:
 *   a crash or a partition, as the server sees it) to the follower's isLeader. The server expires
 *   the session at most one session timeout after it last heard from it, at a tick boundary.
 *   Target: within the session timeout plus one tick.
 * Curator's close case is timed inside the JVM (System.nanoTime); its session-loss case from here,
 * when its isLeader line arrives (a pipe hop, well under a millisecond, against seconds).
 * @tenure/* are imported from source (the script re-runs itself with a tsconfig that maps them).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rerunFromSource } from './run-from-source.js';

const root = fileURLToPath(new URL('..', import.meta.url));

rerunFromSource(import.meta.url);

const { createClient, RetryPolicies } = await import('@tenure/client');
type Client = import('@tenure/client').Client;
const { LeaderLatch } = await import('@tenure/leader');
type LeaderLatchT = import('@tenure/leader').LeaderLatch;
const { TestingServer, FaultProxy } = await import('@tenure/testing');
type FaultProxyT = import('@tenure/testing').FaultProxy;
const { createEmbeddedServer } = await import('@tenure/server');
const { compileJava, javaToolchain, JavaProgram } = await import('../test/interop/java.js');

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const ROUNDS = Number(arg('rounds', '20'));
const WARMUP = Number(arg('warmup', '5'));
const LOSS_ROUNDS = Number(arg('loss-rounds', '6'));
const SESSION_MS = Number(arg('session', '2000'));
const TICK_MS = 200; // TestingServer's tickTime

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (xs: readonly number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

function newClient(target: { connectString: string } | { transport: import('@tenure/client').Transport }): Client {
  return createClient({
    ...target,
    sessionTimeoutMs: SESSION_MS,
    connectionTimeoutMs: 5000,
    retryPolicy: RetryPolicies.exponentialBackoff(20, 10, 500),
  });
}

/** Tenure's close case: the leader closes, the follower leads, the old leader rejoins; `rounds` timed after `warmup`. */
async function tenureClose(clients: [Client, Client], path: string, rounds: number, warmup: number): Promise<number[]> {
  const ledAt: number[] = [0, 0];
  const mk = (i: number): LeaderLatchT => {
    const l = new LeaderLatch(clients[i]!, path, { id: i === 0 ? 'a' : 'b' });
    l.on('isLeader', () => (ledAt[i] = performance.now()));
    return l;
  };
  const ls = [mk(0), mk(1)];
  await ls[0]!.start();
  await ls[0]!.await({ timeoutMs: 10_000 });
  await ls[1]!.start();
  await sleep(200);
  let leader = 0;
  const out: number[] = [];
  for (let r = 0; r < warmup + rounds; r++) {
    const follower = 1 - leader;
    const t0 = performance.now();
    const closing = ls[leader]!.close(); // timed from here, awaited once the follower leads
    await ls[follower]!.await({ timeoutMs: 10_000 });
    if (r >= warmup) out.push(ledAt[follower]! - t0);
    await closing;
    ls[leader] = mk(leader);
    await ls[leader]!.start();
    await sleep(150);
    leader = follower;
  }
  await Promise.all(ls.map((l) => l.close()));
  return out;
}

/** One participant in the session-loss case, behind its own fault proxy. */
interface LossMember {
  id: string;
  proxy: FaultProxyT;
  led: Promise<number>;
  drop(): Promise<void>;
}

/**
 * The session-loss case: the leader's proxy blackholes its connection; timed until the
 * follower's isLeader. Each round a new participant joins at the back through a new proxy.
 */
async function lossRounds(
  connectString: string,
  rounds: number,
  join: (id: string, proxy: FaultProxyT) => Promise<LossMember>,
): Promise<number[]> {
  const member = async (id: string): Promise<LossMember> => join(id, await FaultProxy.start(connectString));
  let leader = await member('p0');
  await leader.led;
  let follower = await member('p1');
  const out: number[] = [];
  const drops: Promise<void>[] = [];
  for (let r = 0; r < rounds; r++) {
    await sleep(300 + Math.random() * 400); // land anywhere in the ping cycle
    const t0 = performance.now();
    leader.proxy.blackhole();
    const t1 = await follower.led;
    out.push(t1 - t0);
    drops.push(leader.drop()); // in the background, while the next member joins; awaited at the end
    leader = follower;
    follower = await member(`p${r + 2}`);
  }
  await Promise.all([...drops, leader.drop(), follower.drop()]);
  return out;
}

async function main(): Promise<void> {
  const java = javaToolchain();
  if (!java.available) throw new Error(`Curator is needed for this benchmark: ${java.reason}`);
  process.stderr.write('compiling the Curator benchmark and starting ZooKeeper...\n');
  const [compiled, server] = await Promise.all([
    compileJava([join(root, 'bench/java/CuratorLeaderBench.java')]),
    TestingServer.start({ jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] }),
  ]);
  const jvm = await JavaProgram.start(
    { classpath: compiled.classpath, mainClass: 'CuratorLeaderBench', args: [String(SESSION_MS)], jvmFlags: ['-Xmx512m'] },
    /^ready$/,
    60_000,
  );
  const results: Record<string, { tenure: number[]; curator?: number[] }> = {};
  let rtt: number[] = [];
  let negotiated = 0;
  try {
    // Round trip on this server, for the close target.
    const probe = newClient({ connectString: server.connectString });
    await probe.start();
    negotiated = probe.negotiatedTimeoutMs;
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      await probe.exists('/');
      if (i >= 100) rtt.push(performance.now() - t);
    }
    await probe.close();

    process.stderr.write(`close: Curator (${WARMUP} + ${ROUNDS} rounds)...\n`);
    const line = await jvm.ask(`close ${server.connectString} /bench/curator-close ${ROUNDS} ${WARMUP}`, /^close \[/, 120_000);
    const curatorClose = JSON.parse(line.slice('close '.length)) as number[];
    process.stderr.write(`close: Tenure (${WARMUP} + ${ROUNDS} rounds)...\n`);
    const cs: [Client, Client] = [newClient({ connectString: server.connectString }), newClient({ connectString: server.connectString })];
    await Promise.all(cs.map((c) => c.start()));
    const tenureClose_ = await tenureClose(cs, '/bench/tenure-close', ROUNDS, WARMUP);
    await Promise.all(cs.map((c) => c.close()));
    results['close -> new leader (ZooKeeper)'] = { tenure: tenureClose_, curator: curatorClose };

    process.stderr.write(`session loss: Curator (${LOSS_ROUNDS} rounds)...\n`);
    const curatorLoss = await lossRounds(server.connectString, LOSS_ROUNDS, async (id, proxy) => {
      // The last follower never leads: its wait ends with the JVM.
      const led = jvm.waitFor(new RegExp(`^isLeader ${id}$`), 600_000).then(
        () => performance.now(),
        () => NaN,
      );
      await jvm.ask(`join ${id} ${proxy.connectString} /bench/curator-loss`, new RegExp(`^joined ${id}$`));
      return {
        id,
        proxy,
        led,
        drop: async () => {
          await jvm.ask(`drop ${id}`, new RegExp(`^dropped ${id}$`));
          await proxy.close();
        },
      };
    });
    process.stderr.write(`session loss: Tenure (${LOSS_ROUNDS} rounds)...\n`);
    const tenureLoss = await lossRounds(server.connectString, LOSS_ROUNDS, async (id, proxy) => {
      const client = newClient({ connectString: proxy.connectString });
      await client.start();
      const latch = new LeaderLatch(client, '/bench/tenure-loss', { id });
      const led = new Promise<number>((resolve) => latch.once('isLeader', () => resolve(performance.now())));
      await latch.start();
      return {
        id,
        proxy,
        led,
        drop: async () => {
          await proxy.close();
          await latch.close();
          await client.close();
        },
      };
    });
    results['session loss -> new leader (ZooKeeper)'] = { tenure: tenureLoss, curator: curatorLoss };

    process.stderr.write('close: Tenure on the embedded server, in-process...\n');
    const embedded = createEmbeddedServer({ tickMs: TICK_MS });
    const es: [Client, Client] = [newClient({ transport: embedded.transport() }), newClient({ transport: embedded.transport() })];
    await Promise.all(es.map((c) => c.start()));
    results['close -> new leader (embedded, in-process)'] = { tenure: await tenureClose(es, '/bench/close', ROUNDS, WARMUP) };
    await Promise.all(es.map((c) => c.close()));
    await embedded.close();
  } finally {
    await jvm.stop();
    await server.close();
    compiled.dispose();
  }

  const javaVersion = spawnSync(java.toolchain.java, ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0];
  const ms = (n: number | undefined): string => (n === undefined ? '-' : `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ms`);
  console.log(
    `LeaderLatch failover, 2 participants (own sessions); close: median of ${ROUNDS} rounds after ${WARMUP} warm-up; session loss: median of ${LOSS_ROUNDS}`,
  );
  console.log(
    `ZooKeeper 3.8 standalone on loopback (tickTime ${TICK_MS} ms, forceSync=no); session timeout ${negotiated} ms negotiated; Curator 5.4.0 on ${javaVersion}; Tenure on node ${process.version}`,
  );
  console.log(
    `round trip here (exists, median): ${ms(median(rtt))}; targets: close <= 1 round trip + the notification; session loss <= ${negotiated} + ${TICK_MS} = ${negotiated + TICK_MS} ms`,
  );
  const head = ['case', 'Tenure median', 'p90', 'Curator median', 'p90', 'Tenure/Curator'];
  const rows = Object.entries(results).map(([name, r]) => {
    const t = median(r.tenure);
    const c = r.curator ? median(r.curator) : undefined;
    return [name, ms(t), ms(pct(r.tenure, 90)), ms(c), r.curator ? ms(pct(r.curator, 90)) : '-', c ? `${(t / c).toFixed(2)}x` : '-'];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmtRow = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(fmtRow(head));
  for (const r of rows) console.log(fmtRow(r));
  console.log('(Tenure/Curator < 1: Tenure fails over faster)');
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `  ${name}: Tenure ${r.tenure.map((x) => x.toFixed(1)).join(', ')}${r.curator ? `; Curator ${r.curator.map((x) => x.toFixed(1)).join(', ')}` : ''}`,
    );
  }
  rtt = [];
}

await main();
