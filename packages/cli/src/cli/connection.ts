/**
 * From the global options to a started client: `--auth` as the client's authInfo, `--sasl` as its
 * SASL DIGEST-MD5 option, `--tls-ca/--tls-cert/--tls-key` as its `tls` option (a secure client
 * port; host names verified).
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { createClient, RetryPolicies, TimeoutError, type Client } from '@tenure/client';
import type { GlobalOptions } from './global-options.js';
import { UsageError } from './usage-error.js';

/** Refuses connection options that cannot work (a TLS file that cannot be read, half a key pair), before anything connects. */
export function checkConnectionOptions(o: GlobalOptions): void {
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined))
    throw new UsageError(
      `${o.tlsCert === undefined ? '--tls-key' : '--tls-cert'} needs ${o.tlsCert === undefined ? '--tls-cert' : '--tls-key'} too (a client certificate and its key)`,
    );
  tlsOptionsOf(o);
}

/**
 * Node's TLS options from `--tls-ca/--tls-cert/--tls-key` (the files read now), or undefined without
 * them. The client's `tls` option and the four-letter words of `sessions` take these.
 */
export function tlsOptionsOf(o: GlobalOptions): ConnectionOptions | undefined {
  if (!o.tlsCa && !o.tlsCert && !o.tlsKey) return undefined;
  const read = (flag: string, file: string | undefined): Buffer | undefined => {
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const ca = read('--tls-ca', o.tlsCa);
  const cert = read('--tls-cert', o.tlsCert);
  const key = read('--tls-key', o.tlsKey);
  // Only what was given: an absent `ca` keeps Node's trusted CAs.
  return { ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
}

/** A client for `o.server`, started; rejects with a one-line error when no server answers within `o.timeoutMs`. */
export async function connect(o: GlobalOptions): Promise<Client> {
  checkConnectionOptions(o);
  const tls = tlsOptionsOf(o);
  const client = createClient({
    connectString: o.server,
    ...(tls === undefined ? {} : { tls }),
    authInfo: o.auth,
    ...(o.sasl ? { sasl: { mechanism: 'DIGEST-MD5' as const, username: o.sasl.username, password: o.sasl.password } } : {}),
    sessionTimeoutMs: 30_000,
    connectionTimeoutMs: o.timeoutMs,
    retryPolicy: RetryPolicies.exponentialBackoff(100, 3, 1000),
  });
  try {
    await client.start({ timeoutMs: o.timeoutMs });
  } catch (err) {
    await client.close().catch(() => {});
    if (err instanceof TimeoutError) throw new TimeoutError(`cannot connect to ${o.server} within ${o.timeoutMs} ms`, o.timeoutMs);
    throw err;
  }
  return client;
}
