/**
 * Sessions as the servers tell them: the four-letter words `cons` (each connection's client
 * address, session id, timeout, last operation) and `dump` (every session, and each session's
 * ephemeral nodes), asked of every server of the connect string. ZooKeeper 3.5+ answers only
 * whitelisted words (`4lw.commands.whitelist`; 3.5's default is `srvr` alone); a refusal, a TLS
 * port that closes on plain text, or an unreachable server becomes a `problem` with its reason.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import type { SessionInfo, SessionsReport } from './report.js';
import { AbortError, TenureError, TimeoutError } from '@tenure/client';

export interface FourLetterWordOptions {
  /** Per word and server. Default 3,000 ms. */
  timeoutMs?: number;
  /** Speak TLS to the servers (a secure client port answers four-letter words over TLS only). */
  tls?: ConnectionOptions;
  signal?: AbortSignal;
}

/** `host:port` of each server in a connect string (`h1:2181,h2/chroot`; 2181 when no port; `[v6]:port`). */
export function serversOf(connectString: string): string[] {
  const slash = connectString.indexOf('/');
  const hosts = slash < 0 ? connectString : connectString.slice(0, slash);
  return hosts
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0)
    .map(withPort);
}

function withPort(host: string): string {
  if (host.startsWith('[')) return /\]:\d+$/.test(host) ? host : `${host}:2181`;
  const colons = host.split(':').length - 1;
  if (colons === 0) return `${host}:2181`;
  return colons === 1 ? host : `[${host}]:2181`;
}

function splitHostPort(server: string): { host: string; port: number } {
  const i = server.lastIndexOf(':');
  const host = server.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(server.slice(i + 1)) };
}

/** Sends `word` to `server` (`host:port`) and resolves the answer, read until the server closes. */
export function fourLetterWord(server: string, word: string, options: FourLetterWordOptions = {}): Promise<string> {
  const { host, port } = splitHostPort(server);
  const timeoutMs = options.timeoutMs ?? 3000;
  return new Promise((resolve, reject) => {
    const socket: Socket = options.tls
      ? connectTls({ ...options.tls, host, port, servername: options.tls.servername ?? (/^[\d.:]+$/.test(host) ? undefined : host) })
      : connectTcp({ host, port });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (err: Error | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onAbort = (): void => finish(new AbortError(`${word} to ${server}: aborted`));
    const timer = setTimeout(
      () => finish(new TimeoutError(`${word} to ${server}: no answer within ${timeoutMs} ms`, timeoutMs)),
      timeoutMs,
    );
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once(options.tls ? 'secureConnect' : 'connect', () => socket.write(word));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (e) => finish(new TenureError('CONNECTION_FAILED', `${word} to ${server}: ${e.message}`, { cause: e })));
    socket.on('close', () => finish(null));
  });
}

/** The answer a 3.5+ server gives for a word that is not whitelisted, or an empty answer. */
function refusal(word: string, answer: string): string | null {
  if (/is not executed because it is not in the whitelist/.test(answer)) return answer.trim();
  if (answer.trim() === '') return `${word}: empty answer (the port closed without answering)`;
  return null;
}

/** What `cons` says of one established connection. */
export interface ConsEntry {
  sessionId: string;
  clientAddress: string;
  timeoutMs: number | null;
  lastOperation: string | null;
}

/** Parses `cons`: ` /127.0.0.1:5321[1](queued=0,recved=4,sent=4,sid=0x1000…,lop=PING,est=…,to=30000,…)`. Connections without a session are left out. */
export function parseCons(answer: string): ConsEntry[] {
  const out: ConsEntry[] = [];
  for (const line of answer.split('\n')) {
    const m = /^\s*\/?(.+?)\[\d+\]\((.*)\)\s*$/.exec(line);
    if (!m) continue;
    const fields = new Map(m[2]!.split(',').map((kv) => kv.split('=', 2) as [string, string]));
    const sid = fields.get('sid');
    if (sid === undefined) continue;
    const to = Number(fields.get('to'));
    out.push({
      sessionId: normalHex(sid),
      clientAddress: m[1]!,
      timeoutMs: Number.isFinite(to) ? to : null,
      lastOperation: fields.get('lop') ?? null,
    });
  }
  return out;
}

/** Parses `dump`: every session id of the session tracker, and the ephemerals per session. */
export function parseDump(answer: string): Map<string, string[]> {
  const sessions = new Map<string, string[]>();
  let section: 'tracker' | 'ephemerals' | 'other' = 'tracker';
  let owner: string[] | null = null;
  for (const line of answer.split('\n')) {
    if (line.startsWith('ephemeral nodes dump')) section = 'ephemerals';
    else if (line.startsWith('Connections dump')) section = 'other';
    else if (section === 'tracker') {
      const m = /^\t(0x[0-9a-f]+)\s*$/i.exec(line);
      if (m && !sessions.has(normalHex(m[1]!))) sessions.set(normalHex(m[1]!), []);
    } else if (section === 'ephemerals') {
      const head = /^(0x[0-9a-f]+):\s*$/i.exec(line);
      if (head) {
        const id = normalHex(head[1]!);
        owner = sessions.get(id) ?? [];
        sessions.set(id, owner);
      } else if (line.startsWith('\t') && owner !== null && line.trim().startsWith('/')) owner.push(line.trim());
    }
  }
  for (const paths of sessions.values()) paths.sort();
  return sessions;
}

function normalHex(text: string): string {
  return `0x${BigInt.asUintN(64, BigInt(text)).toString(16)}`;
}

/**
 * Each session of the ensemble with its address, timeout and ephemerals, from `cons` and `dump` on
 * every server (`host:port`). When no server answers both, `source` is `tree` and `sessions` is
 * empty: the caller may fill it from the ephemeral owners it saw (see `sessionsFromTree`).
 */
export async function readSessions(servers: readonly string[], options: FourLetterWordOptions = {}): Promise<SessionsReport> {
  const problems: { server: string; reason: string }[] = [];
  const byId = new Map<string, { ephemerals: string[]; cons: ConsEntry | null; server: string | null }>();
  let answered = false;
  await Promise.all(
    servers.map(async (server) => {
      let cons: string;
      let dump: string;
      try {
        [cons, dump] = await Promise.all([fourLetterWord(server, 'cons', options), fourLetterWord(server, 'dump', options)]);
      } catch (err) {
        problems.push({ server, reason: err instanceof Error ? err.message : String(err) });
        return;
      }
      const refused = refusal('cons', cons) ?? refusal('dump', dump);
      if (refused !== null) {
        problems.push({ server, reason: refused });
        return;
      }
      answered = true;
      // Every server of an ensemble knows every global session; `cons` only the ones connected to it.
      for (const [id, ephemerals] of parseDump(dump)) {
        const s = byId.get(id) ?? { ephemerals: [], cons: null, server: null };
        if (ephemerals.length > s.ephemerals.length) s.ephemerals = ephemerals;
        byId.set(id, s);
      }
      for (const c of parseCons(cons)) {
        const s = byId.get(c.sessionId) ?? { ephemerals: [], cons: null, server: null };
        s.cons = c;
        s.server = server;
        byId.set(c.sessionId, s);
      }
    }),
  );
  problems.sort((a, b) => (a.server < b.server ? -1 : 1));
  if (!answered) return { source: 'tree', sessions: [], problems };
  const sessions: SessionInfo[] = [...byId]
    .map(([sessionId, s]) => ({
      sessionId,
      clientAddress: s.cons?.clientAddress ?? null,
      timeoutMs: s.cons?.timeoutMs ?? null,
      server: s.server,
      ephemerals: s.ephemerals,
      lastOperation: s.cons?.lastOperation ?? null,
    }))
    .sort((a, b) => (BigInt(a.sessionId) < BigInt(b.sessionId) ? -1 : 1));
  return { source: 'four-letter-words', sessions, problems };
}

/** Sessions as the tree shows them: the owners of ephemeral nodes (`[path, ephemeralOwner hex]`), without address or timeout. */
export function sessionsFromTree(ephemerals: Iterable<readonly [path: string, owner: string]>): SessionInfo[] {
  const byId = new Map<string, string[]>();
  for (const [path, owner] of ephemerals) {
    if (owner === '0x0') continue;
    (byId.get(owner) ?? byId.set(owner, []).get(owner)!).push(path);
  }
  return [...byId]
    .map(([sessionId, paths]) => ({
      sessionId,
      clientAddress: null,
      timeoutMs: null,
      server: null,
      ephemerals: paths.sort(),
      lastOperation: null,
    }))
    .sort((a, b) => (BigInt(a.sessionId) < BigInt(b.sessionId) ? -1 : 1));
}
