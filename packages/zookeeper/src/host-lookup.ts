/**
 * Host names are resolved at every connect attempt (a server replaced behind the same DNS name is
 * found), through a hook tests can swap. An unresolvable name fails that attempt only, with a
 * ConnectionLossError whose `cause` is the DNS error: the client skips to its next host.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ConnectionLossError, TenureError } from '@tenure/protocol';
import type { HostPort } from './connect-string.js';

/** A host name → its addresses (IPv4 or IPv6 literals). Rejects (e.g. ENOTFOUND) when it has none. */
export type HostLookup = (hostname: string) => Promise<readonly string[]>;

const defaultLookup: HostLookup = async (hostname) => (await dnsLookup(hostname, { all: true })).map((a) => a.address);

/** The address to connect to for `target`: itself for an IP literal, else one of its addresses at random. */
export async function resolveTarget(target: HostPort, server: string, lookup: HostLookup = defaultLookup): Promise<HostPort> {
  if (isIP(target.host) !== 0) return target;
  let addresses: readonly string[];
  try {
    addresses = await lookup(target.host);
  } catch (err) {
    throw new ConnectionLossError(undefined, `cannot resolve ${server}`, { cause: err });
  }
  if (addresses.length === 0) {
    throw new ConnectionLossError(undefined, `cannot resolve ${server}`, {
      cause: new TenureError('ENODATA', `${target.host} has no address`),
    });
  }
  return { host: addresses[Math.floor(Math.random() * addresses.length)]!, port: target.port };
}
