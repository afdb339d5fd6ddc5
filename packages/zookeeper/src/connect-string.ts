/**
 * ZooKeeper connect strings: `host1:port1,host2:port2/chroot/path` (docs/zookeeper-wire-protocol.md §6.6).
 * Everything from the first `/` is the chroot; a chroot of `/` means none.
 */
import { InvalidPathError, pathProblem, InvalidArgumentError } from '@tenure/protocol';

export const DEFAULT_PORT = 2181;

export interface ParsedConnectString {
  /** Normalised `host:port` entries, in the order given (IPv6 hosts keep their brackets). */
  hosts: string[];
  /** The chroot without a trailing slash, or '' when there is none. */
  chroot: string;
}

export interface HostPort {
  host: string;
  port: number;
}

/** Parses one `host[:port]` entry; IPv6 literals are written `[::1]:2181`. */
export function parseHostPort(entry: string, defaultPort = DEFAULT_PORT): HostPort {
  const s = entry.trim();
  if (s.length === 0) throw new InvalidArgumentError('empty host in connect string');
  let host: string;
  let portText: string | undefined;
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0) throw new InvalidArgumentError(`unterminated IPv6 literal in ${JSON.stringify(entry)}`);
    host = s.slice(1, end);
    const rest = s.slice(end + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) throw new InvalidArgumentError(`unexpected ${JSON.stringify(rest)} after IPv6 literal`);
      portText = rest.slice(1);
    }
  } else {
    const colon = s.lastIndexOf(':');
    if (colon >= 0 && s.indexOf(':') !== colon) {
      throw new InvalidArgumentError(`IPv6 host ${JSON.stringify(entry)} must be written in brackets, e.g. [::1]:2181`);
    }
    host = colon >= 0 ? s.slice(0, colon) : s;
    portText = colon >= 0 ? s.slice(colon + 1) : undefined;
  }
  if (host.length === 0) throw new InvalidArgumentError(`missing host name in ${JSON.stringify(entry)}`);
  let port = defaultPort;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText)) throw new InvalidArgumentError(`invalid port in ${JSON.stringify(entry)}`);
    port = Number(portText);
  }
  if (port < 1 || port > 65535) throw new InvalidArgumentError(`port out of range in ${JSON.stringify(entry)}`);
  return { host, port };
}

/** Formats a host and port back into a `host:port` entry. */
export function formatHostPort({ host, port }: HostPort): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Parses and validates a connect string; throws TypeError for a bad host list, InvalidPathError for a bad chroot. */
export function parseConnectString(connectString: string): ParsedConnectString {
  if (typeof connectString !== 'string') throw new InvalidArgumentError('connect string must be a string');
  const slash = connectString.indexOf('/');
  const hostPart = slash < 0 ? connectString : connectString.slice(0, slash);
  let chroot = slash < 0 ? '' : connectString.slice(slash);
  if (chroot === '/') chroot = '';
  if (chroot !== '') {
    const problem = pathProblem(chroot);
    if (problem !== undefined) throw new InvalidPathError(chroot, `chroot: ${problem}`);
  }
  const entries = hostPart.split(',').filter((e) => e.trim() !== '');
  if (entries.length === 0) throw new InvalidArgumentError(`no hosts in connect string ${JSON.stringify(connectString)}`);
  const hosts = entries.map((e) => formatHostPort(parseHostPort(e)));
  return { hosts, chroot };
}
