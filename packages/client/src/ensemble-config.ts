/**
 * ZooKeeper's dynamic configuration, as /zookeeper/config holds it (3.5+):
 *
 *   server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181
 *   server.2=[::1]:2888:3888:observer;[::1]:2181
 *   version=100000000
 *
 * A member line is `server.<id>=<host>:<quorumPort>:<electionPort>[:<role>][;[<clientHost>:]<clientPort>]`
 * (role defaults to participant; a client part of only a port means every address). The version
 * is the zxid that made the config, in hex as ZooKeeper writes it. A standalone server's config is
 * empty.
 */
import { InvalidArgumentError } from '@tenure/protocol';

/** The config node, read outside any chroot or namespace. */
export const CONFIG_NODE = '/zookeeper/config';

export type MemberRole = 'participant' | 'observer';

export interface EnsembleMember {
  /** The server's id (its myid), as the config writes it. */
  id: string;
  host: string;
  quorumPort: number;
  electionPort: number;
  role: MemberRole;
  /** Where clients connect, when the config says (ZooKeeper 3.5+ dynamic configs do). */
  clientHost?: string;
  clientPort?: number;
}

export interface EnsembleConfig {
  members: EnsembleMember[];
  /** The config's version, hex as ZooKeeper writes it ('' when the config names none). */
  version: string;
  /** The node's text as read. */
  raw: string;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

/** Splits `host:port:...` where host may be a bracketed IPv6 literal. */
function splitAddress(text: string, line: string): string[] {
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) throw new InvalidArgumentError(`config: unterminated IPv6 literal in ${JSON.stringify(line)}`);
    const rest = text.slice(end + 1);
    return [text.slice(1, end), ...(rest === '' ? [] : rest.replace(/^:/, '').split(':'))];
  }
  return text.split(':');
}

function port(text: string | undefined, line: string): number {
  if (text === undefined || !/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    throw new InvalidArgumentError(`config: bad port ${JSON.stringify(text ?? '')} in ${JSON.stringify(line)}`);
  }
  return Number(text);
}

/** Parses one `server.N=...` line. */
export function parseMemberLine(line: string): EnsembleMember {
  const m = /^\s*server\.(\d+)\s*=\s*(.*?)\s*$/.exec(line);
  if (!m) throw new InvalidArgumentError(`config: not a server line: ${JSON.stringify(line)}`);
  const [quorumPart, clientPart] = m[2]!.split(';', 2) as [string, string | undefined];
  const parts = splitAddress(quorumPart, line);
  if (parts.length < 3 || parts.length > 4 || parts[0] === '') {
    throw new InvalidArgumentError(`config: expected host:quorumPort:electionPort[:role] in ${JSON.stringify(line)}`);
  }
  const role = (parts[3] ?? 'participant').toLowerCase();
  if (role !== 'participant' && role !== 'observer') {
    throw new InvalidArgumentError(`config: unknown role ${JSON.stringify(parts[3])} in ${JSON.stringify(line)}`);
  }
  const member: EnsembleMember = {
    id: m[1]!,
    host: parts[0]!,
    quorumPort: port(parts[1], line),
    electionPort: port(parts[2], line),
    role,
  };
  if (clientPart !== undefined && clientPart.trim() !== '') {
    const c = clientPart.trim();
    const cparts = splitAddress(c, line);
    if (cparts.length === 1) {
      member.clientHost = '0.0.0.0';
      member.clientPort = port(cparts[0], line);
    } else if (cparts.length === 2) {
      member.clientHost = cparts[0]!;
      member.clientPort = port(cparts[1], line);
    } else {
      throw new InvalidArgumentError(`config: bad client address ${JSON.stringify(c)} in ${JSON.stringify(line)}`);
    }
  }
  return member;
}

/** Parses the text of /zookeeper/config. Lines other than `server.N=` and `version=` are ignored. */
export function parseEnsembleConfig(data: Buffer | string): EnsembleConfig {
  const raw = typeof data === 'string' ? data : data.toString('utf8');
  const members: EnsembleMember[] = [];
  let version = '';
  for (const line of raw.split('\n')) {
    const t = line.trim();
    if (t.startsWith('server.')) members.push(parseMemberLine(t));
    else if (t.startsWith('version=')) version = t.slice('version='.length).trim();
  }
  members.sort((a, b) => Number(a.id) - Number(b.id));
  return { members, version, raw };
}

function bracket(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** A member back as the `server.N=...` line ZooKeeper's reconfig takes. */
export function formatMember(m: EnsembleMember): string {
  let line = `server.${m.id}=${bracket(m.host)}:${m.quorumPort}:${m.electionPort}:${m.role}`;
  if (m.clientPort !== undefined) line += `;${bracket(m.clientHost ?? '0.0.0.0')}:${m.clientPort}`;
  return line;
}

/**
 * The `host:port` a client connects to for each member that names a client port. A wildcard
 * client address (0.0.0.0, ::) means "every address": the member's quorum host stands for it, as
 * Curator's EnsembleTracker does.
 */
export function clientHostsOf(config: EnsembleConfig): string[] {
  const out: string[] = [];
  for (const m of config.members) {
    if (m.clientPort === undefined) continue;
    const host = m.clientHost === undefined || WILDCARDS.has(m.clientHost) ? m.host : m.clientHost;
    out.push(`${bracket(host)}:${m.clientPort}`);
  }
  return out;
}

/** The version as a number, for comparing two configs (0n when there is none). */
export function configVersion(config: EnsembleConfig): bigint {
  return /^[0-9a-f]+$/i.test(config.version) ? BigInt('0x' + config.version) : 0n;
}
