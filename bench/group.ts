/**
 * GroupMember at scale, on the embedded server in this process (each case in a fresh Node):
 * - converge: `--members` (800) GroupMembers in one process, spread over `--clients` (8) sessions,
 *   all started at once; the time until every one sees all of them, and the heap after (gc'd,
 *   minus the heap before), per member and per (member, member seen) entry.
 * - entry: one GroupMember observing `--entries` (10,000) members of another session; heap delta
 *   per cached member entry (payloads of 24 bytes).
 * - rejoin: `--rejoin` (1,000) members on one session, one observer on its own session; the
 *   members' session is expired and they all rejoin (jitter 1 s). Counted: the observer session's
 *   read requests (getData, getChildren, exists, multiRead on `tenure:client:request`) from the
 *   expiry until it has seen some leave and then all of them again.
 *
 *   npx tsx bench/group.ts [--members 800] [--clients 8] [--entries 10000] [--rejoin 1000] [--rounds 3] [--cases converge,entry,rejoin]
 *
 * Curator's GroupMember is not run beside it: its cache (CuratorCache) is per member too, and the
 * JVM's heap is not comparable per entry from here.
 * @tenure/* are imported from source (the script re-runs itself with a tsconfig that maps them).
 */
import { spawnSync } from 'node:child_process';
import { tracingChannel } from 'node:diagnostics_channel';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { rerunFromSource } from './run-from-source.js';

rerunFromSource(import.meta.url);

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const MEMBERS = Number(arg('members', '800'));
const CLIENTS = Number(arg('clients', '8'));
const CASES = arg('cases', 'converge,entry,rejoin').split(',');
const ENTRIES = Number(arg('entries', '10000'));
const REJOIN = Number(arg('rejoin', '1000'));
const ROUNDS = Number(arg('rounds', '3'));

const gc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc');
  g();
  g();
};
const heap = (): number => (gc(), process.memoryUsage().heapUsed);
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function setup() {
  const { createClient } = await import('@tenure/client');
  const { createEmbeddedServer } = await import('@tenure/server');
  const { GroupMember } = await import('@tenure/group');
  const server = createEmbeddedServer({ tickMs: 200 });
  const open = async () => {
    const c = createClient({ transport: server.transport(), sessionTimeoutMs: 4000 });
    await c.start();
    return c;
  };
  return { server, open, GroupMember };
}

/** Resolves once `member` sees `n` members. */
function untilSize(member: import('@tenure/group').GroupMember, n: number): Promise<void> {
  if (member.getCurrentMembers().size >= n) return Promise.resolve();
  return new Promise((resolve) => {
    const on = (m: Map<string, Buffer>): void => {
      if (m.size >= n) {
        member.off('change', on);
        resolve();
      }
    };
    member.on('change', on);
  });
}

async function converge(): Promise<void> {
  const { server, open, GroupMember } = await setup();
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => open()));
  const before = heap();
  const t0 = performance.now();
  const members = Array.from(
    { length: MEMBERS },
    (_, i) => new GroupMember(clients[i % CLIENTS]!, '/bench-group', `member-${i}`, `payload-of-member-${i}`, { rejoinJitterMs: 0 }),
  );
  await Promise.all(members.map((m) => m.start({ timeoutMs: 120_000 })));
  await Promise.all(members.map((m) => untilSize(m, MEMBERS)));
  const ms = performance.now() - t0;
  const bytes = heap() - before;
  await Promise.all(members.map((m) => m.close()));
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
  process.stdout.write(JSON.stringify({ ms, perMember: bytes / MEMBERS, perEntry: bytes / (MEMBERS * MEMBERS) }) + '\n');
}

async function entry(): Promise<void> {
  const { server, open, GroupMember } = await setup();
  const [writer, reader] = await Promise.all([open(), open()]);
  await writer.create('/bench-group', null, { createParents: true });
  for (let i = 0; i < ENTRIES; i += 500)
    await Promise.all(
      Array.from({ length: Math.min(500, ENTRIES - i) }, (_, k) =>
        writer.create(`/bench-group/member-${i + k}`, `payload-${String(i + k).padStart(16, '0')}`),
      ),
    );
  const before = heap();
  const observer = new GroupMember(reader, '/bench-group', 'observer', 'x');
  await observer.start({ timeoutMs: 120_000 });
  await untilSize(observer, ENTRIES + 1);
  const bytes = heap() - before;
  await observer.close();
  await Promise.all([writer.close(), reader.close()]);
  await server.close();
  process.stdout.write(JSON.stringify({ perEntry: bytes / ENTRIES }) + '\n');
}

async function rejoin(): Promise<void> {
  const { server, open, GroupMember } = await setup();
  const [host, reader] = await Promise.all([open(), open()]);
  const members = Array.from(
    { length: REJOIN },
    (_, i) => new GroupMember(host, '/bench-group', `member-${i}`, `p${i}`, { rejoinJitterMs: 1000 }),
  );
  await Promise.all(members.map((m) => m.start({ timeoutMs: 60_000 })));
  await Promise.all(members.map((m) => m.waitForJoined({ timeoutMs: 60_000 })));
  const observer = new GroupMember(reader, '/bench-group', 'observer', 'x');
  await observer.start({ timeoutMs: 60_000 });
  await untilSize(observer, REJOIN + 1);
  let reads = 0;
  const reading = new Set(['getData', 'getChildren', 'exists', 'multiRead']);
  const channel = tracingChannel<unknown, { op: string; sessionId?: bigint }>('tenure:client:request');
  const sub = {
    start: (m: { op: string; sessionId?: bigint }) => {
      if (m.sessionId === reader.sessionId && reading.has(m.op)) reads++;
    },
  };
  channel.subscribe(sub as never);
  const left = new Promise<void>((resolve) => {
    const on = (m: Map<string, Buffer>): void => {
      if (m.size <= REJOIN) {
        observer.off('change', on);
        resolve();
      }
    };
    observer.on('change', on);
  });
  server.expireSession(host.sessionId);
  await left;
  await untilSize(observer, REJOIN + 1);
  channel.unsubscribe(sub as never);
  await observer.close();
  await Promise.all(members.map((m) => m.close()));
  await Promise.all([host.close(), reader.close()]);
  await server.close();
  process.stdout.write(JSON.stringify({ reads }) + '\n');
}

function runCase(which: string): Record<string, number> {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, self, '--case', which, ...process.argv.slice(2)], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{')) throw new Error(`case ${which} failed (${r.status}):\n${r.stderr}\n${r.stdout}`);
  process.stderr.write(`  ${which}: ${last}\n`);
  return JSON.parse(last) as Record<string, number>;
}

const only = arg('case', '');
if (only === 'converge') await converge();
else if (only === 'entry') await entry();
else if (only === 'rejoin') await rejoin();
else {
  const rows: Record<string, number[]> = { ms: [], perMember: [], perEntry: [], entry: [], reads: [] };
  for (let r = 0; r < ROUNDS; r++) {
    process.stderr.write(`round ${r + 1}/${ROUNDS}...\n`);
    if (CASES.includes('converge')) {
      const c = runCase('converge');
      rows.ms!.push(c.ms!);
      rows.perMember!.push(c.perMember!);
      rows.perEntry!.push(c.perEntry!);
    }
    if (CASES.includes('entry')) rows.entry!.push(runCase('entry').perEntry!);
    if (CASES.includes('rejoin')) rows.reads!.push(runCase('rejoin').reads!);
  }
  console.log(
    `GroupMember on the embedded server, node ${process.version}, medians of ${ROUNDS} rounds, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`${MEMBERS} members in one process (${CLIENTS} sessions): converge ${median(rows.ms!).toFixed(0)} ms`);
  console.log(
    `  heap per member ${(median(rows.perMember!) / 1024).toFixed(1)} KiB, per (member, member seen) ${median(rows.perEntry!).toFixed(0)} B`,
  );
  console.log(`one observer of ${ENTRIES} members: ${median(rows.entry!).toFixed(0)} B per cached member entry`);
  console.log(`mass rejoin of ${REJOIN} members (session expired, jitter 1 s): ${median(rows.reads!)} read requests by the observer`);
  console.log(`  rounds: converge ${rows.ms!.map((x) => x.toFixed(0)).join(', ')} ms; reads ${rows.reads!.join(', ')}`);
}
