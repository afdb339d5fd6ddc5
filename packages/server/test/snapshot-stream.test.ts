/**
 * Fuzzy snapshots streamed to their file (storage/fuzzy-snapshot.ts): the file is written front
 * to back in pieces, with the ACL cache fixed at Z before the first node. It decodes to the same
 * tree as the one-go encoder's file, and a node whose ACL changed after the cache was written
 * names an id the cache lacks (as ZooKeeper's fuzzy snapshots can), which recovery then takes
 * from the log.
 */
import { OPEN_ACL_UNSAFE, type ACL } from '@tenure/protocol';
import { expect, test } from 'vitest';
import { intern } from '../src/security/acl-policy.js';
import { DataTree } from '../src/semantics/data-tree.js';
import { takeFuzzySnapshot } from '../src/storage/fuzzy-snapshot.js';
import { decodeSnapshot, encodeSnapshot, UNKNOWN_ACL } from '../src/storage/snapshot.js';

const readOnly: readonly ACL[] = intern([{ perms: 1, id: { scheme: 'world', id: 'anyone' } }]);
const digestAcl: readonly ACL[] = intern([{ perms: 31, id: { scheme: 'digest', id: 'bob:Zb7dCKCAjz9rUYK8nYeQV0tSK2A=' } }]);

function bigTree(n: number): DataTree {
  const tree = new DataTree(true);
  tree.create('/a', null, OPEN_ACL_UNSAFE, 0n, 1n, 1000);
  for (let i = 0; i < n; i++)
    tree.create(`/a/n${i}`, Buffer.alloc(100, i), i % 2 ? readOnly : OPEN_ACL_UNSAFE, 0n, BigInt(i + 2), 1000 + i);
  return tree;
}

/** Streams a fuzzy snapshot of `tree` at `zxid`; `onWrite` runs at each write (between slices). */
async function stream(tree: DataTree, zxid: bigint, onWrite: (n: number) => void = () => undefined) {
  const pieces: Buffer[] = [];
  let writes = 0;
  const snap = await takeFuzzySnapshot({ state: () => ({ tree, sessions: new Map([[7n, 30_000]]) }), lastZxid: () => zxid }, async () => ({
    write: async (parts) => {
      for (const p of parts) pieces.push(Buffer.from(p)); // the last piece is reused after this resolves
      onWrite(writes++);
      await new Promise((r) => setImmediate(r));
    },
  }));
  return { snap, file: Buffer.concat(pieces), writes };
}

test('a streamed snapshot is written in pieces and decodes to the tree the one-go encoder writes', async () => {
  const tree = bigTree(20_000);
  const zxid = 20_001n;
  const { snap, file, writes } = await stream(tree, zxid);
  expect(writes).toBeGreaterThan(2);
  expect(snap.bytes).toBe(file.length);
  expect(snap.digest).toBe(true);
  expect(file.equals(encodeSnapshot({ tree, sessions: new Map([[7n, 30_000]]) }, zxid))).toBe(true);
  const loaded = decodeSnapshot(file, true);
  expect(loaded.tree.nodes.size).toBe(tree.nodes.size);
  expect(loaded.tree.get('/a/n3')!.acl).toEqual(readOnly);
  expect(loaded.sessions.get(7n)).toBe(30_000);
});

test('a node given a new ACL after the cache was written names an id the cache lacks; the others keep theirs', async () => {
  const tree = bigTree(20_000);
  const late = tree.get('/a/n19999')!;
  // After the head is out (the first write), a setACL with a list no node held at Z.
  const { file } = await stream(tree, 20_001n, (n) => {
    if (n === 0) tree.setAcl(late, digestAcl, 1);
  });
  const loaded = decodeSnapshot(file, true);
  expect(loaded.tree.get('/a/n19999')!.acl).toBe(UNKNOWN_ACL);
  expect([...loaded.unknownAcls.keys()]).toEqual(['/a/n19999']);
  expect(loaded.tree.get('/a/n19997')!.acl).toEqual(readOnly);
  expect(loaded.tree.get('/a/n0')!.acl).toEqual(OPEN_ACL_UNSAFE);
});
