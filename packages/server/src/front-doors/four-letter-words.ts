/**
 * ZooKeeper's four-letter words (docs/zookeeper-wire-protocol.md §6.10) as the TCP listener answers them, in ZooKeeper
 * 3.8's text formats so that tools written against ZooKeeper read them: ruok, isro, srvr, stat,
 * mntr, cons, dump, wchc, wchp, wchs, conf, envi, srst and crst. Other known words get 3.8's
 * answer for a word outside the whitelist.
 */
import { hostname, platform, release, arch } from 'node:os';
import type { ServerIntrospection } from '../ops/server-introspection.js';

/** Traffic and request latency, of one connection or of every connection of a listener. */
export interface TrafficStats {
  received: number;
  sent: number;
  minLatencyMs: number;
  maxLatencyMs: number;
  latencySumMs: number;
  latencyCount: number;
}

/** Stats with nothing counted yet. */
export const noTraffic = (): TrafficStats => ({
  received: 0,
  sent: 0,
  minLatencyMs: Infinity,
  maxLatencyMs: 0,
  latencySumMs: 0,
  latencyCount: 0,
});

/** What `cons` and `stat` show of one TCP connection. */
export interface ConnectionStats extends TrafficStats {
  readonly remote: string;
  readonly reading: boolean;
  readonly queuedFrames: number;
  readonly established: boolean;
  readonly sessionId: bigint | undefined;
  readonly timeoutMs: number | undefined;
  readonly establishedAt: number;
  lastOp: string;
  lastCxid: number;
  lastZxid: bigint;
  lastResponseAt: number;
  lastLatencyMs: number;
}

/** What the words read from the listener. */
export interface ListenerStats {
  readonly sockets: ReadonlySet<ConnectionStats>;
  readonly startedAt: number;
  readonly bound: { port: number } | undefined;
  readonly totals: TrafficStats;
}

/** The version line tools parse: ZooKeeper 3.8 semantics, served by Tenure. */
export const VERSION = '3.8.0-tenure, built on Tenure embedded server';

/** The `lop` abbreviations of ZooKeeper's FinalRequestProcessor, by op code. */
const OP_ABBREVIATIONS = new Map<number, string>([
  [11, 'PING'],
  [-11, 'CLOS'],
  [-10, 'SESS'],
  [14, 'MULT'],
  [22, 'MLTR'],
  [1, 'CREA'],
  [15, 'CREA'],
  [19, 'CREA'],
  [21, 'CREA'],
  [2, 'DELE'],
  [20, 'DELE'],
  [5, 'SETD'],
  [16, 'RECO'],
  [7, 'SETA'],
  [13, 'CHEC'],
  [3, 'EXIS'],
  [4, 'GETD'],
  [101, 'SETW'],
  [105, 'STW2'],
  [6, 'GETA'],
  [8, 'GETC'],
  [12, 'GETC'],
  [104, 'GETACN'],
  [17, 'CHKW'],
  [18, 'REMW'],
  [103, 'GETE'],
  [106, 'ADDW'],
  [107, 'HOMI'],
  [9, 'SYNC'],
  [100, 'AUTH'],
  [102, 'SASL'],
]);

export function opAbbreviation(op: number): string {
  return OP_ABBREVIATIONS.get(op) ?? 'UNKN';
}

/** Over a shared store, what `dump` and `cons` cover, said in their answers. */
const SHARED_NOTE = 'Sessions and ephemerals above: the whole namespace (every front end); connections: this front end only.';
const CONS_SHARED_NOTE = 'Connections of this front end only; `dump` lists the sessions and ephemerals of the whole namespace.';

const hex = (n: bigint | number): string => `0x${BigInt.asUintN(64, BigInt(n)).toString(16)}`;
/** ZooKeeper prints averages as a Java double rounded to 4 places ("0.0", "19.3333"). */
function avg(sum: number, count: number): string {
  const x = count === 0 ? 0 : Math.round((sum / count) * 1e4) / 1e4;
  return Number.isInteger(x) ? x.toFixed(1) : String(x);
}
const ms = (x: number): number => (Number.isFinite(x) ? Math.round(x) : 0);

function latency(l: ListenerStats): { min: number; avg: string; max: number } {
  const t = l.totals;
  return { min: ms(t.minLatencyMs), avg: avg(t.latencySumMs, t.latencyCount), max: ms(t.maxLatencyMs) };
}

function connectionLine(c: ConnectionStats, brief: boolean): string {
  let s = ` ${c.remote}[${c.reading ? 1 : 0}](queued=${c.queuedFrames},recved=${c.received},sent=${c.sent}`;
  if (!brief && c.established && c.sessionId !== undefined) {
    s +=
      `,sid=${hex(c.sessionId)},lop=${c.lastOp},est=${c.establishedAt},to=${c.timeoutMs},lcxid=${hex(c.lastCxid)}` +
      `,lzxid=${hex(c.lastZxid)},lresp=${c.lastResponseAt},llat=${ms(c.lastLatencyMs)},minlat=${ms(c.minLatencyMs)}` +
      `,avglat=${Math.round(c.latencyCount === 0 ? 0 : c.latencySumMs / c.latencyCount)},maxlat=${ms(c.maxLatencyMs)}`;
  }
  return `${s})\n`;
}

function summary(view: ServerIntrospection, l: ListenerStats): string {
  const lat = latency(l);
  return (
    `Latency min/avg/max: ${lat.min}/${lat.avg}/${lat.max}\n` +
    `Received: ${l.totals.received}\nSent: ${l.totals.sent}\nConnections: ${l.sockets.size}\nOutstanding: ${view.outstanding}\n` +
    `Zxid: ${hex(view.zxid)}\nMode: standalone\nNode count: ${view.nodeCount}\n`
  );
}

/** Watched paths per connected session id (data, exist, child and persistent watches alike). */
function watchedPaths(view: ServerIntrospection): Map<bigint, string[]> {
  const out = new Map<bigint, string[]>();
  for (const s of view.sessions()) {
    if (!s.connected) continue;
    const w = view.watchesOf(s.sessionId);
    const paths = [...new Set([...w.data, ...w.child])].sort();
    if (paths.length > 0) out.set(s.sessionId, paths);
  }
  return out;
}

function dump(view: ServerIntrospection, l: ListenerStats): string {
  const sessions = view.sessions();
  // Sessions grouped by when they expire, as ZooKeeper's expiry buckets.
  const buckets = new Map<number, bigint[]>();
  const now = Date.now();
  for (const s of sessions) {
    const at = s.expiresInMs === undefined ? 0 : now + s.expiresInMs;
    const b = buckets.get(at);
    if (b) b.push(s.sessionId);
    else buckets.set(at, [s.sessionId]);
  }
  let out = `SessionTracker dump:\nSession Sets (${buckets.size})/(${sessions.length}):\n`;
  for (const [at, ids] of [...buckets].sort((a, b) => a[0] - b[0])) {
    // In a shared store a session expires with its lease there, whichever server serves it.
    const when = at !== 0 ? `at ${new Date(at).toUTCString()}` : view.shared ? 'with their leases in the shared store' : 'at never';
    out += `${ids.length} expire ${when}:\n`;
    for (const id of ids) out += `\t${hex(id)}\n`;
  }
  const withEphemerals = sessions.filter((s) => s.ephemerals.length > 0);
  out += `ephemeral nodes dump:\nSessions with Ephemerals (${withEphemerals.length}):\n`;
  for (const s of withEphemerals) {
    out += `${hex(s.sessionId)}:\n`;
    for (const p of [...s.ephemerals].sort()) out += `\t${p}\n`;
  }
  const established = [...l.sockets].filter((c) => c.established);
  out += `Connections dump:\nConnections (${established.length}):\n`;
  for (const c of established) out += `\tip: ${c.remote} sessionId: ${hex(c.sessionId ?? 0n)}\n`;
  if (view.shared) out += `${SHARED_NOTE}\n`;
  return out;
}

function mntr(view: ServerIntrospection, l: ListenerStats): string {
  const lat = latency(l);
  const sessions = view.sessions();
  let watches = 0;
  for (const n of view.watchCounts().values()) watches += n;
  const rows: Array<[string, string | number]> = [
    ['zk_version', VERSION],
    ['zk_server_state', 'standalone'],
    ['zk_avg_latency', lat.avg],
    ['zk_max_latency', lat.max],
    ['zk_min_latency', lat.min],
    ['zk_packets_received', l.totals.received],
    ['zk_packets_sent', l.totals.sent],
    ['zk_num_alive_connections', l.sockets.size],
    ['zk_outstanding_requests', view.outstanding],
    ['zk_znode_count', view.nodeCount],
    ['zk_watch_count', watches],
    ['zk_ephemerals_count', sessions.reduce((n, s) => n + s.ephemerals.length, 0)],
    ['zk_global_sessions', sessions.length],
    ['zk_local_sessions', 0],
    ['zk_uptime', Date.now() - l.startedAt],
  ];
  return rows.map(([k, v]) => `${k}\t${v}\n`).join('');
}

/** The answer to `word` (already known to be a four-letter word). */
export function answerFourLetterWord(word: string, view: ServerIntrospection, l: ListenerStats): string {
  const allowed = view.config.fourLetterWords;
  if (allowed !== '*' && !allowed.includes(word)) return `${word} is not executed because it is not in the whitelist.\n`;
  switch (word) {
    case 'ruok':
      return 'imok';
    case 'isro':
      return 'rw';
    case 'srvr':
      return `Zookeeper version: ${VERSION}\n${summary(view, l)}`;
    case 'stat': {
      let clients = '';
      for (const c of l.sockets) clients += connectionLine(c, true);
      return `Zookeeper version: ${VERSION}\nClients:\n${clients}\n${summary(view, l)}`;
    }
    case 'cons': {
      let out = '';
      for (const c of l.sockets) out += connectionLine(c, false);
      return view.shared ? `${out}${CONS_SHARED_NOTE}\n\n` : `${out}\n`;
    }
    case 'mntr':
      return mntr(view, l);
    case 'dump':
      return dump(view, l);
    case 'wchc': {
      let out = '';
      for (const [id, paths] of watchedPaths(view)) out += `${hex(id)}\n${paths.map((p) => `\t${p}\n`).join('')}`;
      return `${out}\n`;
    }
    case 'wchp': {
      const byPath = new Map<string, bigint[]>();
      for (const [id, paths] of watchedPaths(view)) for (const p of paths) (byPath.get(p) ?? byPath.set(p, []).get(p)!).push(id);
      let out = '';
      for (const [p, ids] of [...byPath].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
        out += `${p}\n${ids.map((id) => `\t${hex(id)}\n`).join('')}`;
      return `${out}\n`;
    }
    case 'wchs': {
      const w = watchedPaths(view);
      const paths = new Set<string>();
      for (const ps of w.values()) for (const p of ps) paths.add(p);
      let total = 0;
      for (const n of view.watchCounts().values()) total += n;
      return `${w.size} connections watching ${paths.size} paths\nTotal watches:${total}\n`;
    }
    case 'conf': {
      const o = view.config;
      return (
        `clientPort=${l.bound?.port ?? 0}\ntickTime=${o.tickMs}\nmaxClientCnxns=${o.maxClientCnxns}\nminSessionTimeout=${o.minSessionTimeoutMs}\n` +
        `maxSessionTimeout=${o.maxSessionTimeoutMs}\njute.maxbuffer=${o.maxBufferBytes}\nserverId=0\n`
      );
    }
    case 'envi':
      return (
        `Environment:\nzookeeper.version=${VERSION}\nhost.name=${hostname()}\nnode.version=${process.version}\n` +
        `os.name=${platform()}\nos.arch=${arch()}\nos.version=${release()}\nuser.dir=${process.cwd()}\n`
      );
    case 'srst': {
      Object.assign(l.totals, noTraffic());
      return 'Server stats reset.\n';
    }
    case 'crst': {
      for (const c of l.sockets) {
        Object.assign(c, noTraffic(), { lastLatencyMs: 0 });
      }
      return 'Connection stats reset.\n';
    }
    default:
      return `${word} is not executed because it is not in the whitelist.\n`;
  }
}
