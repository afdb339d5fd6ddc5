/**
 * GroupMember at scale, on the embedded server in this process (each case in a fresh Node, run
 * with --expose-gc; heap after two gc() calls):
 * - converge: `--members` (800) GroupMembers in one process, spread over `--clients` (8) sessions,
 *   all started at once; the time until every one sees all of them, and the heap after minus the
 *   heap before, per member and per (member, member seen) pair.
 * - entry: one GroupMember observing `--entries` (10,000) members of another session (payloads of
 *   24 bytes); heap delta per cached member entry (V8's heap, and the ArrayBuffers beside it).
 * - rejoin: `--rejoin` (1,000) member nodes on one session (GroupMember's own PersistentNode, so
 *   that only the observer's cache is measured), one GroupMember observing on its own session; the
 *   members' session is expired and they all rejoin, spread over `--jitters` ms (0 and 1000), the
 *   observer on `--watches` (a persistent watch, and one-shot watches as on ZooKeeper 3.5).
 *   Counted from the expiry until the observer's view holds every member again, each on its new
 *   node (a leave and a return may reach it as one change): the observer session's reads by op
 *   (on `tenure:client:request`), and the observer's `change` events.
 *
 *   npx tsx bench/group.ts [--members 800] [--clients 8] [--entries 10000] [--rejoin 1000]
 *     [--jitters 0,1000] [--watches persistent,one-shot] [--rounds 3] [--cases converge,entry,rejoin] [--before <dir>] [--timeout-s 180]
 *
 * `--before <dir>`: a checkout of the code before a change (`git archive <commit> | tar -x -C <dir>`,
 * node_modules copied, this file copied to <dir>/bench/group.ts); each round runs each case there
 * and here, interleaved, each in a fresh process, killed after `--timeout-s`. Medians are shown.
 * Curator's GroupMember is not run beside it: its cache (CuratorCache) is per member too, and a
 * JVM's heap is not comparable per entry from here.
 * @tenure/* are imported from source (the script re-runs itself with a tsconfig that maps them).
 */
import { spawnSync } from 'node:child_process';
import { tracingChannel } from 'node:diagnostics_channel';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, median } from './case-rounds.js';
import { rerunFromSource } from './run-from-source.js';

rerunFromSource(import.meta.url);

const MEMBERS = Number(arg('members', '800'));
const CLIENTS = Number(arg('clients', '8'));
const CASES = arg('cases', 'converge,entry,rejoin').split(',');
const ENTRIES = Number(arg('entries', '10000'));
const REJOIN = Number(arg('rejoin', '1000'));
const JITTERS = arg('jitters', '0,1000').split(',').map(Number);
const WATCHES = arg('watches', 'persistent,one-shot').split(',');
const ROUNDS = Number(arg('rounds', '3'));
const BEFORE = arg('before', '');
const TIMEOUT_S = Number(arg('timeout-s', '180'));

type Row = Record<string, number>;

const gc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc');
  g();
  g();
};
const memory = (): { heap: number; buffers: number } => {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
};

async function setup() {
  const { createClient } = await import('@tenure/client');
  const { createEmbeddedServer } = await import('@tenure/server');
  const { GroupMember } = await import('@tenure/group');
  const { PersistentNode } = await import('@tenure/nodes');
  const server = createEmbeddedServer({ tickMs: 200 });
  const open = async () => {
    const c = createClient({ transport: server.transport(), sessionTimeoutMs: 4000 });
    await c.start();
    return c;
  };
  return { server, open, GroupMember, PersistentNode };
}

/** Resolves once `member` sees `n` members (`atMost`: at most `n`). */
function untilSize(member: import('@tenure/group').GroupMember, n: number, atMost = false): Promise<void> {
  const done = (size: number): boolean => (atMost ? size <= n : size >= n);
  if (done(member.getCurrentMembers().size)) return Promise.resolve();
  return new Promise((resolve) => {
    const on = (m: Map<string, Buffer>): void => {
      if (done(m.size)) {
        member.off('change', on);
        resolve();
      }
    };
    member.on('change', on);
  });
}

async function converge(): Promise<Row> {
  const { server, open, GroupMember } = await setup();
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => open()));
  const before = memory();
  const t0 = performance.now();
  const members = Array.from(
    { length: MEMBERS },
    (_, i) => new GroupMember(clients[i % CLIENTS]!, '/bench-group', `member-${i}`, `payload-of-member-${i}`, { rejoinJitterMs: 0 }),
  );
  await Promise.all(members.map((m) => m.start({ timeoutMs: 600_000 })));
  await Promise.all(members.map((m) => untilSize(m, MEMBERS)));
  const ms = performance.now() - t0;
  const after = memory();
  await Promise.all(members.map((m) => m.close()));
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
  const bytes = after.heap - before.heap;
  return { ms, perMember: bytes / MEMBERS, perPair: bytes / (MEMBERS * MEMBERS), heapMB: bytes / 2 ** 20 };
}

async function entry(): Promise<Row> {
  const { server, open, GroupMember } = await setup();
  const [writer, reader] = await Promise.all([open(), open()]);
  await writer.create('/bench-group', null, { createParents: true });
  for (let i = 0; i < ENTRIES; i += 500)
    await Promise.all(
      Array.from({ length: Math.min(500, ENTRIES - i) }, (_, k) =>
        writer.create(`/bench-group/member-${i + k}`, `payload-${String(i + k).padStart(16, '0')}`),
      ),
    );
  const before = memory();
  const observer = new GroupMember(reader, '/bench-group', 'observer', 'x');
  await observer.start({ timeoutMs: 120_000 });
  await observer.waitForJoined({ timeoutMs: 120_000 });
  await untilSize(observer, ENTRIES + 1);
  const after = memory();
  const row = { perEntry: (after.heap - before.heap) / ENTRIES, buffersPerEntry: (after.buffers - before.buffers) / ENTRIES };
  await observer.close();
  await Promise.all([writer.close(), reader.close()]);
  await server.close();
  return row;
}

async function rejoin(jitterMs: number, watch: string): Promise<Row> {
  const { server, open, GroupMember, PersistentNode } = await setup();
  const [host, reader] = await Promise.all([open(), open()]);
  await host.create('/bench-group', null, { createParents: true });
  const members = Array.from(
    { length: REJOIN },
    (_, i) => new PersistentNode(host, { path: `/bench-group/member-${i}`, data: `p${i}`, rejoinJitterMs: jitterMs }),
  );
  await Promise.all(members.map((m) => m.start()));
  await Promise.all(members.map((m) => m.waitForInitialCreate({ timeoutMs: 120_000 })));
  const observer = new GroupMember(reader, '/bench-group', 'observer', 'x', { persistentWatches: watch !== 'one-shot' });
  await observer.start({ timeoutMs: 120_000 });
  await untilSize(observer, REJOIN + 1);
  const reads: Row = { getData: 0, getChildren: 0, exists: 0, multiRead: 0 };
  const channel = tracingChannel<unknown, { op: string; sessionId?: bigint }>('tenure:client:request');
  const sub = {
    start: (m: { op: string; sessionId?: bigint }) => {
      if (m.sessionId === reader.sessionId && m.op in reads) reads[m.op]!++;
    },
  };
  let changes = 0;
  const counted = (): void => void changes++;
  observer.on('change', counted);
  channel.subscribe(sub as never);
  const t0 = performance.now();
  const old = host.sessionId;
  const renewed = (): boolean =>
    host.sessionId !== old && members.every((m) => server.node(m.basePath)?.stat.ephemeralOwner === host.sessionId);
  const back = new Promise<void>((resolve) => {
    const on = (m: Map<string, Buffer>): void => {
      if (m.size === REJOIN + 1 && renewed()) {
        observer.off('change', on);
        resolve();
      }
    };
    observer.on('change', on);
  });
  server.expireSession(old);
  await back;
  const ms = performance.now() - t0;
  channel.unsubscribe(sub as never);
  observer.off('change', counted);
  await observer.close();
  await Promise.all(members.map((m) => m.close()));
  await Promise.all([host.close(), reader.close()]);
  await server.close();
  const total = Object.values(reads).reduce((a, b) => a + b, 0);
  return { reads: total, ...reads, changes, ms };
}

/** One case in a fresh Node (of the code in `root`'s tree), killed after the timeout; null if it did not finish. */
function runCase(root: string, which: string, label: string): Row | null {
  const script = join(root, 'bench/group.ts');
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, script, '--case', which, ...process.argv.slice(2)], {
    // Its tree's tsconfig set here, so that it does not re-run itself (a kill would orphan that child).
    env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'bench/tsconfig.json') },
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    timeout: TIMEOUT_S * 1000,
    killSignal: 'SIGKILL',
  });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.signal === 'SIGKILL') {
    process.stderr.write(`  ${label} ${which}: did not finish in ${TIMEOUT_S} s\n`);
    return null;
  }
  if (r.status !== 0 || !last.startsWith('{')) throw new Error(`${label} case ${which} failed (${r.status}):\n${r.stderr}\n${r.stdout}`);
  process.stderr.write(`  ${label} ${which}: ${last}  (load ${loadavg()[0]!.toFixed(2)})\n`);
  return JSON.parse(last) as Row;
}

const only = arg('case', '');
if (only) {
  const row =
    only === 'converge'
      ? await converge()
      : only === 'entry'
        ? await entry()
        : await rejoin(Number(only.split(':')[1]), only.split(':')[2] ?? 'persistent');
  process.stdout.write(JSON.stringify(row) + '\n');
} else {
  const here = fileURLToPath(new URL('..', import.meta.url));
  const sides = BEFORE ? [['before', BEFORE] as const, ['after', here] as const] : [['after', here] as const];
  const cases = [
    ...(CASES.includes('converge') ? ['converge'] : []),
    ...(CASES.includes('entry') ? ['entry'] : []),
    ...(CASES.includes('rejoin') ? WATCHES.flatMap((w) => JITTERS.map((j) => `rejoin:${j}:${w}`)) : []),
  ];
  const rows = new Map<string, (Row | null)[]>();
  const loads: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    process.stderr.write(`round ${r + 1}/${ROUNDS}\n`);
    for (const which of cases) {
      // Interleaved, the side that goes first alternating by round.
      for (const [label, root] of r % 2 ? [...sides].reverse() : sides) {
        const key = `${label} ${which}`;
        rows.set(key, [...(rows.get(key) ?? []), runCase(root, which, label)]);
        loads.push(loadavg()[0]!);
      }
    }
  }
  const med = (key: string, field: string): number | null => {
    const xs = (rows.get(key) ?? []).filter((x): x is Row => x !== null).map((x) => x[field]!);
    return xs.length === 0 ? null : median(xs);
  };
  const show = (x: number | null, digits = 0): string => (x === null ? 'DNF' : x.toFixed(digits));
  console.log(
    `GroupMember on the embedded server, node ${process.version}, medians of ${ROUNDS} interleaved rounds, 1-min load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  );
  for (const [label] of sides) {
    console.log(`${label}:`);
    if (cases.includes('converge'))
      console.log(
        `  ${MEMBERS} members in one process (${CLIENTS} sessions): converge ${show(med(`${label} converge`, 'ms'))} ms, heap ${show(med(`${label} converge`, 'heapMB'), 1)} MB, per member ${show(med(`${label} converge`, 'perMember'))} B, per (member, member seen) ${show(med(`${label} converge`, 'perPair'))} B`,
      );
    if (cases.includes('entry'))
      console.log(
        `  one observer of ${ENTRIES} members: ${show(med(`${label} entry`, 'perEntry'))} B of heap per cached entry (+ ${show(med(`${label} entry`, 'buffersPerEntry'))} B of ArrayBuffers)`,
      );
    for (const [w, j] of WATCHES.flatMap((w) => JITTERS.map((j) => [w, j] as const))) {
      const key = `${label} rejoin:${j}:${w}`;
      if (!rows.has(key)) continue;
      console.log(
        `  ${REJOIN} members rejoin (session expired, jitter ${j} ms, observer on ${w} watches): the observer's reads ${show(med(key, 'reads'))} (getChildren ${show(med(key, 'getChildren'))}, getData ${show(med(key, 'getData'))}, multiRead ${show(med(key, 'multiRead'))}), change events ${show(med(key, 'changes'))}, ${show(med(key, 'ms'))} ms`,
      );
    }
  }
}
