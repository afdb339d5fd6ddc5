/**
 * From the global options to a started client: `--auth` as the client's authInfo, `--sasl` as its
 * SASL DIGEST-MD5 option. TLS (`--tls-ca/--tls-cert/--tls-key`) is parsed but refused here until
 * @tenure/client has its `tls` option (issue 15); this is the one place to wire it.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { createClient, RetryPolicies, TimeoutError, type Client } from '@tenure/client';
import type { GlobalOptions } from './global-options.js';
import { UsageError } from './usage-error.js';

/** Refuses the connection options this build cannot honour, before anything connects. */
export function checkConnectionOptions(o: GlobalOptions): void {
  const tls = [o.tlsCa && '--tls-ca', o.tlsCert && '--tls-cert', o.tlsKey && '--tls-key'].filter(Boolean);
  if (tls.length > 0) throw new UsageError(`${tls.join(', ')}: TLS connections are not available yet in this build of @tenure/client (issue 15); connect to a plain client port`);
}

/**
 * Node's TLS options from `--tls-ca/--tls-cert/--tls-key` (the files read now), or undefined without
 * them. The client's `tls` option (issue 15) and the four-letter words of `sessions` take these.
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
  return { ca: read('--tls-ca', o.tlsCa), cert: read('--tls-cert', o.tlsCert), key: read('--tls-key', o.tlsKey) };
}

/** A client for `o.server`, started; rejects with a one-line error when no server answers within `o.timeoutMs`. */
export async function connect(o: GlobalOptions): Promise<Client> {
  checkConnectionOptions(o);
  const client = createClient({
    connectString: o.server,
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
