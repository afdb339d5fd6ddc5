/**
 * The parents' pzxid and cversion after a real lease expiry (README "Differences from ZooKeeper"):
 * a session's engine goes away (its transport closes; the session lives on in etcd until its lease
 * expires), etcd deletes its ephemerals in one revision, and of the two engines left one follow-up
 * Txn moves the parent's pzxid (the children key is put exactly once). The Stat's cversion counts
 * the deletes at once, as ZooKeeper's does. Sequence numbers created afterwards through both
 * engines are unique and above every earlier one.
 */
import { describe, expect, it } from 'vitest';
import { CreateMode, type Client, type WatchEvent } from '@tenure/client';
import { EtcdRpc, etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { eventually, sleep } from '@tenure/testing';
import { useEtcdBed } from './etcd-bed.js';

const PREFIX = '/repair';

/** The etcd key version (puts since created) and mod_revision of the parent's children key. */
async function childrenKey(endpoint: string, path: string): Promise<{ version: number; mod: bigint }> {
  const rpc = new EtcdRpc([endpoint]);
  try {
    const res = await rpc.call('kv', 'Range', { key: Buffer.from(`${PREFIX}/c${path}`) });
    const kv = (res['kvs'] as Array<{ version: string; mod_revision: string }>)[0]!;
    return { version: Number(kv.version), mod: BigInt(kv.mod_revision) };
  } finally {
    rpc.close();
  }
}

const seq = (name: string): number => Number(name.slice(-10));

describe('repairing the parents after a lease expiry', () => {
  const bed = useEtcdBed();
  const open = (t: EtcdTransport): Promise<Client> => bed.open(t, 2000);

  it('one repair lands; cversion, pzxid and later sequence numbers are right', async () => {
    const mk = (): EtcdTransport => bed.transport(etcdTransport(bed.etcd.endpoint, { prefix: PREFIX }));
    const doomed = mk();
    const [a, b] = [await open(mk()), await open(mk())];
    const owner = await open(doomed);
    await a.create('/p', '');
    const earlier: string[] = [];
    for (let i = 0; i < 3; i++) earlier.push((await owner.create('/p/e-', '', { mode: CreateMode.EPHEMERAL_SEQUENTIAL })).path);
    earlier.push((await a.create('/p/keep-', '', { mode: CreateMode.PERSISTENT_SEQUENTIAL })).path);
    await b.sync('/p');
    const before = (await a.exists('/p'))!;
    const keyBefore = await childrenKey(bed.etcd.endpoint, '/p');
    expect(before.numChildren).toBe(4);

    let changed!: (e: WatchEvent) => void;
    const childrenChanged = new Promise<WatchEvent>((resolve) => (changed = resolve));
    await b.getChildren('/p', { watch: (e) => changed(e) });

    // The owner's engine goes; nothing renews the lease, so etcd expires it (a real expiry, ~2 s).
    await doomed.close();
    expect((await childrenChanged).type).toBe('NodeChildrenChanged');
    await eventually(async () => (await a.getChildren('/p')).children.length === 1, 15_000, 'the ephemerals to go');

    // Both engines see pzxid move to the repair's revision, and cversion count the three deletes.
    const repaired = await eventually(async () => {
      const k = await childrenKey(bed.etcd.endpoint, '/p');
      return k.mod > keyBefore.mod ? k : undefined;
    }, 10_000);
    for (const c of [a, b]) {
      await c.sync('/p');
      const st = (await c.exists('/p'))!;
      expect(st.pzxid).toBe(repaired.mod);
      expect(st.pzxid).toBeGreaterThan(before.pzxid);
      expect(st.cversion).toBe(before.cversion + 3);
      expect(st.numChildren).toBe(1);
    }
    // Of the two engines, one repair landed: the children key was put once since the expiry.
    await sleep(500);
    expect((await childrenKey(bed.etcd.endpoint, '/p')).version).toBe(keyBefore.version + 1);

    // Sequence numbers afterwards, through both engines at once: unique, above every earlier one,
    // and rising in each client's own order.
    const fromA: string[] = [];
    const fromB: string[] = [];
    await Promise.all([
      (async () => {
        for (let i = 0; i < 5; i++) fromA.push((await a.create('/p/s-', '', { mode: CreateMode.PERSISTENT_SEQUENTIAL })).path);
      })(),
      (async () => {
        for (let i = 0; i < 5; i++) fromB.push((await b.create('/p/s-', '', { mode: CreateMode.PERSISTENT_SEQUENTIAL })).path);
      })(),
    ]);
    const all = [...fromA, ...fromB].map(seq);
    expect(new Set(all).size).toBe(10);
    expect(Math.min(...all)).toBeGreaterThan(Math.max(...earlier.map(seq)));
    for (const list of [fromA, fromB]) expect(list.map(seq)).toEqual([...list.map(seq)].sort((x, y) => x - y));
  }, 60_000);
});
