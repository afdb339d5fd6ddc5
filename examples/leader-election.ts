/**
 * Leader election with fencing tokens: three candidates on the embedded server.
 *
 *   npm run demo        (tsc -b && node examples/dist/leader-election.js)
 *
 * alpha, beta and gamma join one LeaderLatch election, each with its own client (its own
 * session). The leader writes jobs to a store that fences by token: it accepts a write only if its
 * token is at least the highest it has seen. Then:
 * 1. alpha steps down (close) and rejoins at the back: beta takes over.
 * 2. beta crashes: it stalls in the middle of a write (a long GC pause: no heartbeat, no I/O,
 *    made with the server's `silence`), and the server expires its session (`expireSession`).
 *    gamma takes over at once. When beta wakes up, its write reaches the store with beta's old
 *    token and is refused; its client finds the session gone, and its latch rejoins at the back.
 * Every line of the timeline is printed from the event that happened (latch events, connection
 * states, the store's answers); the times and tokens are whatever this run produced.
 */
import { createClient, type Client, type ConnectionState } from '@tenure/client';
import { LeaderLatch, LeadershipLostError, type Leadership } from '@tenure/leader';
import { createEmbeddedServer } from '@tenure/server';

const PATH = '/services/orders/leader';
const t0 = performance.now();
const ms = (): string => `+${Math.round(performance.now() - t0)} ms`.padStart(9);
const sleep = (n: number): Promise<void> => new Promise((r) => setTimeout(r, n));

const timeline: string[] = [];
function log(who: string, what: string): void {
  const line = `${ms()}  ${who.padEnd(6)} ${what}`;
  timeline.push(line);
  console.log(line);
}
function section(title: string): void {
  console.log(`\n  -- ${title}`);
}

/** The resource the leader guards: it refuses writes carrying a token lower than one it has seen. */
class FencedStore {
  private highest = -1n;
  readonly jobs: string[] = [];
  refused = 0;

  write(token: bigint, job: string): boolean {
    if (token < this.highest) {
      this.refused++;
      return false;
    }
    this.highest = token;
    this.jobs.push(job);
    return true;
  }
}

interface Candidate {
  name: string;
  client: Client;
  latch: LeaderLatch;
  /** Set to stall this candidate's next write for that many ms (the crash scenario). */
  freezeNextWriteMs?: number;
  onWriteStarted?: () => void;
}

const server = createEmbeddedServer({ tickMs: 100 });
const store = new FencedStore();
const terms: Array<{ who: string; token: bigint; from: number; to?: number; end?: string }> = [];

/** What a leader does while its term lasts: a job every 120 ms, stopping when the signal aborts. */
async function lead(c: Candidate, leadership: Leadership): Promise<void> {
  const { fencingToken, signal } = leadership;
  for (let n = 1; !signal.aborted; n++) {
    const job = `${c.name}#${n}`;
    const freeze = c.freezeNextWriteMs;
    if (freeze !== undefined) {
      c.freezeNextWriteMs = undefined;
      log(c.name, `writes ${job} with token ${fencingToken}... and stalls for ${freeze} ms`);
      c.onWriteStarted?.();
      await sleep(freeze); // stuck: the write goes out only afterwards
    }
    const ok = store.write(fencingToken, job);
    log(
      c.name,
      ok ? `store: ${job} accepted (token ${fencingToken})` : `store: ${job} REFUSED: token ${fencingToken} is older than the store's`,
    );
    if (!ok) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 120);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

function watch(c: Candidate): void {
  c.latch.on('joined', (path) => log(c.name, `joined the election as ${path.slice(PATH.length + 1)}`));
  c.latch.on('isLeader', (leadership) => {
    log(c.name, `LEADER, fencing token ${leadership.fencingToken}`);
    const term: (typeof terms)[number] = { who: c.name, token: leadership.fencingToken, from: performance.now() - t0 };
    terms.push(term);
    leadership.signal.addEventListener(
      'abort',
      () => {
        const end = (leadership.signal.reason as LeadershipLostError).end;
        term.to = performance.now() - t0;
        term.end = end;
        log(c.name, `term over (${end}): its signal aborted`);
      },
      { once: true },
    );
    lead(c, leadership).catch((err: unknown) => log(c.name, `lead failed: ${String(err)}`));
  });
}

async function candidate(name: string): Promise<Candidate> {
  const client = createClient({ transport: server.transport(), sessionTimeoutMs: 2000 });
  const c: Candidate = { name, client, latch: new LeaderLatch(client, PATH, { id: name, closeMode: 'notifyLeader' }) };
  client.on('stateChanged', (s: ConnectionState) =>
    log(name, `connection ${s}${s === 'RECONNECTED' ? ` (session ${client.sessionId.toString(16).slice(-6)})` : ''}`),
  );
  await client.start();
  watch(c);
  await c.latch.start();
  return c;
}

console.log('Tenure: leader election with fencing tokens (LeaderLatch, three candidates, embedded server)');
console.log(`election path ${PATH}; a fencing token is the czxid of the winning node\n`);

section('three candidates join, in order');
const alpha = await candidate('alpha');
const beta = await candidate('beta');
const gamma = await candidate('gamma');
const first = await alpha.latch.await({ timeoutMs: 5000 });
const participants = await gamma.latch.getParticipants();
log('gamma', `sees participants ${participants.map((p) => `${p.id}${p.isLeader ? '*' : ''}`).join(', ')}`);
await sleep(400);

section('alpha steps down (close) and rejoins at the back');
const closedAt = performance.now();
await alpha.latch.close();
const second = await beta.latch.await({ timeoutMs: 5000 });
const closeFailover = performance.now() - closedAt;
alpha.latch = new LeaderLatch(alpha.client, PATH, { id: 'alpha', closeMode: 'notifyLeader' });
watch(alpha);
await alpha.latch.start();
await sleep(400);

section('beta crashes: it stalls mid-write, and the server expires its session');
const frozen = new Promise<void>((resolve) => (beta.onWriteStarted = resolve));
beta.freezeNextWriteMs = 600;
await frozen;
server.silence(beta.client.sessionId, 600); // the stalled process hears nothing and says nothing
const expiredAt = performance.now();
server.expireSession(beta.client.sessionId);
log('server', "expired beta's session: its node is deleted");
const third = await gamma.latch.await({ timeoutMs: 5000 });
const expiryFailover = performance.now() - expiredAt;
await sleep(900);

section('everyone agrees');
const leader = await alpha.latch.getLeader();
log('alpha', `getLeader() -> ${leader?.id}; participants ${(await alpha.latch.getParticipants()).map((p) => p.id).join(', ')}`);

await Promise.all([alpha, beta, gamma].map((c) => c.latch.close()));
await Promise.all([alpha, beta, gamma].map((c) => c.client.close()));
await server.close();

console.log('\n  terms');
for (const t of terms) {
  const span = t.to === undefined ? 'until close' : `${Math.round(t.to - t.from)} ms`;
  console.log(
    `    ${t.who.padEnd(6)} token ${String(t.token).padStart(3)}  from +${Math.round(t.from)} ms, ${span}${t.end ? ` (${t.end})` : ''}`,
  );
}
console.log(`\n  failover after a close:  ${closeFailover.toFixed(1)} ms (alpha's close -> beta leads)`);
console.log(`  failover after a crash:  ${expiryFailover.toFixed(1)} ms (beta's session expired -> gamma leads)`);
const betaTerm = terms.find((t) => t.who === 'beta');
const gammaTerm = terms.find((t) => t.who === 'gamma');
if (betaTerm?.to !== undefined && gammaTerm !== undefined && gammaTerm.from < betaTerm.to) {
  console.log(
    `  beta, stalled, still believed it led for ${Math.round(betaTerm.to - gammaTerm.from)} ms after gamma took over: no lease can stop a paused process; the token could`,
  );
}
console.log(
  `  tokens rise: ${first.fencingToken} < ${second.fencingToken} < ${third.fencingToken}; the store kept ${store.jobs.length} jobs and refused ${store.refused}`,
);
if (!(first.fencingToken < second.fencingToken && second.fencingToken < third.fencingToken)) process.exitCode = 1;
