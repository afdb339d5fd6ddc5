/**
 * The start-up look at etcd's housekeeping: has it ever compacted, and how full is its backend?
 * etcd 3.4 compacts nothing by default and turns read-only (NOSPACE) once the backend reaches its
 * quota, so a deployment that runs without `--auto-compaction-*` (and without Tenure's compactor)
 * fills up over time. Neither flag can be read from a client, so this looks at what they cause:
 *
 * - compaction: a Range at revision 1 succeeds only if etcd never compacted;
 * - the quota: Maintenance.Status's dbSize against `etcd_server_quota_backend_bytes` from the
 *   member's /metrics (over the same TLS; unknown when /metrics is not reachable).
 */
import { get as httpGet, type RequestOptions } from 'node:http';
import { get as httpsGet } from 'node:https';
import { TimeoutError } from '@tenure/protocol';
import { EtcdUnavailableError } from './errors.js';
import type { EtcdRpc, EtcdTls, Msg } from './etcd-rpc.js';

export interface EtcdHealth {
  /** etcd's revision when asked. */
  readonly revision: bigint;
  /** Whether etcd has compacted at least once (revision 1 is gone). */
  readonly compacted: boolean;
  /** The backend's size, bytes (one member's, as Status answers). */
  readonly dbSize: number;
  /** etcd's --quota-backend-bytes, from /metrics; undefined when that was not reachable. */
  readonly quotaBytes: number | undefined;
  /** What an operator should act on, one sentence each. Empty when all is well. */
  readonly warnings: readonly string[];
}

/** Below this revision a never-compacted etcd is no warning yet: its periodic compaction may not have come round. */
export const UNCOMPACTED_WARN_REVISION = 1000n;
/** A backend this full (of its quota) is a warning. */
export const QUOTA_WARN_RATIO = 0.8;

export async function probeEtcdHealth(
  rpc: EtcdRpc,
  options: { compactorOn: boolean; tls?: EtcdTls | undefined; /** A key the credentials may read (the meta key). */ key: Buffer },
): Promise<EtcdHealth> {
  const status = await rpc.call('maintenance', 'Status', {});
  const revision = BigInt((status['header'] as Msg)['revision'] as string);
  const dbSize = Number(status['dbSize']);
  let compacted: boolean;
  try {
    await rpc.call('kv', 'Range', { key: options.key, revision: '1', limit: 1, keys_only: true });
    compacted = false;
  } catch (err) {
    if (!(err instanceof Error && /compacted/.test(err.message))) throw err;
    compacted = true;
  }
  const quotaBytes = await quotaFromMetrics(rpc.endpoints, options.tls);
  const warnings: string[] = [];
  if (!compacted && !options.compactorOn && revision >= UNCOMPACTED_WARN_REVISION) {
    warnings.push(
      `etcd has never been compacted (revision ${revision}): every write's old value stays until the backend quota turns etcd read-only. ` +
        'Run etcd with --auto-compaction-mode/--auto-compaction-retention, or turn on the compactor (etcd.compaction.retention / `compaction` option)',
    );
  }
  if (quotaBytes !== undefined && dbSize >= QUOTA_WARN_RATIO * quotaBytes) {
    warnings.push(
      `etcd's backend is ${dbSize} bytes of its ${quotaBytes}-byte quota (--quota-backend-bytes): at the quota etcd turns read-only (NOSPACE). ` +
        'Compact and defragment it (etcdctl defrag), or raise the quota',
    );
  }
  return { revision, compacted, dbSize, quotaBytes, warnings };
}

/** `etcd_server_quota_backend_bytes` from the first endpoint that answers /metrics; undefined when none does. */
async function quotaFromMetrics(endpoints: readonly string[], tls: EtcdTls | undefined): Promise<number | undefined> {
  for (const endpoint of endpoints) {
    const base = /^https?:\/\//.test(endpoint) ? endpoint.replace(/\/$/, '') : `${tls === undefined ? 'http' : 'https'}://${endpoint}`;
    const text = await fetchText(`${base}/metrics`, tls).catch(() => undefined);
    const m = text === undefined ? null : /^etcd_server_quota_backend_bytes\s+(\S+)$/m.exec(text);
    if (m !== null) return Number(m[1]);
  }
  return undefined;
}

function fetchText(url: string, tls: EtcdTls | undefined): Promise<string> {
  const secure = url.startsWith('https:');
  const options: RequestOptions & { ca?: Buffer | string; cert?: Buffer | string; key?: Buffer | string } = { timeout: 1000 };
  if (secure) Object.assign(options, tls, { servername: '' });
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsGet : httpGet)(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString())
          : reject(new EtcdUnavailableError(`${url}: HTTP ${res.statusCode}`)),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new TimeoutError(`${url}: no answer within 1000 ms`, 1000)));
    req.on('error', reject);
  });
}
