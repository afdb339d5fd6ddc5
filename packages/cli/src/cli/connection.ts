/**
 * From the global options to a started client. TLS (`--tls-ca/--tls-cert/--tls-key`) and SASL
 * (`--sasl`) are parsed but refused here until @tenure/client has its `tls` and `sasl` options
 * (issue 15); this is the one place to wire them.
 */
import { createClient, RetryPolicies, TimeoutError, type Client } from '@tenure/client';
import type { GlobalOptions } from './global-options.js';
import { UsageError } from './usage-error.js';

/** Refuses the connection options this build cannot honour, before anything connects. */
export function checkConnectionOptions(o: GlobalOptions): void {
  const tls = [o.tlsCa && '--tls-ca', o.tlsCert && '--tls-cert', o.tlsKey && '--tls-key'].filter(Boolean);
  if (tls.length > 0) throw new UsageError(`${tls.join(', ')}: TLS connections are not available yet in this build of @tenure/client (issue 15); connect to a plain client port`);
  if (o.sasl) throw new UsageError('--sasl: SASL authentication is not available yet in this build of @tenure/client (issue 15); use --auth digest:user:password');
}

/** A client for `o.server`, started; rejects with a one-line error when no server answers within `o.timeoutMs`. */
export async function connect(o: GlobalOptions): Promise<Client> {
  checkConnectionOptions(o);
  const client = createClient({
    connectString: o.server,
    authInfo: o.auth,
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
