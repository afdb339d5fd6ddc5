/**
 * The host part of a connect string (`h1:2181,h2:2181/chroot`) for updateServerList: normalised
 * `host:port` entries (default port 2181, IPv6 in brackets), the chroot dropped. The browser
 * entry reaches the client, so this does not import @tenure/zookeeper (which opens sockets).
 */
import { InvalidArgumentError } from '@tenure/protocol';

const DEFAULT_PORT = 2181;

function entry(text: string, whole: string): string {
  const s = text.trim();
  let host: string;
  let port = String(DEFAULT_PORT);
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0) throw new InvalidArgumentError(`unterminated IPv6 literal in ${JSON.stringify(whole)}`);
    host = s.slice(1, end);
    const rest = s.slice(end + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) throw new InvalidArgumentError(`unexpected ${JSON.stringify(rest)} in ${JSON.stringify(whole)}`);
      port = rest.slice(1);
    }
  } else {
    const parts = s.split(':');
    if (parts.length > 2) throw new InvalidArgumentError(`IPv6 host ${JSON.stringify(s)} must be written in brackets`);
    host = parts[0]!;
    if (parts.length === 2) port = parts[1]!;
  }
  if (host === '') throw new InvalidArgumentError(`missing host name in ${JSON.stringify(whole)}`);
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new InvalidArgumentError(`invalid port in ${JSON.stringify(whole)}`);
  }
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

export function parseHostList(connectString: string): { hosts: string[] } {
  if (typeof connectString !== 'string') throw new InvalidArgumentError('connect string must be a string');
  const slash = connectString.indexOf('/');
  const hostPart = slash < 0 ? connectString : connectString.slice(0, slash);
  const hosts = hostPart
    .split(',')
    .filter((e) => e.trim() !== '')
    .map((e) => entry(e, connectString));
  if (hosts.length === 0) throw new InvalidArgumentError(`no hosts in connect string ${JSON.stringify(connectString)}`);
  return { hosts };
}
