/** Test helpers that write and probe etcd revisions directly (outside any Tenure prefix). */
import { EtcdRpc } from '@tenure/etcd';

/** Writes `n` revisions outside any Tenure prefix (concurrent Puts, so it takes a moment). */
export async function fill(endpoint: string, n: number): Promise<void> {
  const rpc = new EtcdRpc([endpoint]);
  try {
    for (let i = 0; i < n; i += 200) {
      const batch = Array.from({ length: Math.min(200, n - i) }, (_, j) =>
        rpc.call('kv', 'Put', { key: Buffer.from(`/filler/${i + j}`), value: Buffer.from('x') }),
      );
      await Promise.all(batch);
    }
  } finally {
    rpc.close();
  }
}

/** Whether etcd has compacted past `revision` (a Range there is refused). */
export async function compactedPast(endpoint: string, revision: bigint): Promise<boolean> {
  const rpc = new EtcdRpc([endpoint]);
  try {
    await rpc.call('kv', 'Range', { key: Buffer.from('/filler/0'), revision: revision.toString() });
    return false;
  } catch (err) {
    if (err instanceof Error && /compacted/.test(err.message)) return true;
    throw err;
  } finally {
    rpc.close();
  }
}
