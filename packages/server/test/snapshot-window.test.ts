/**
 * A snapshot file is decoded through a window (storage/byte-window.ts), not read whole. With a
 * window far smaller than the file, and records larger than the window, the file decodes to the
 * same tree, sessions and digest as its bytes decoded in memory; a cut or a changed byte anywhere
 * is refused with the same error and offset as the in-memory decode gives.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPEN_ACL_UNSAFE, type ACL } from '@tenure/protocol';
import { afterAll, expect, test } from 'vitest';
import { intern } from '../src/security/acl-policy.js';
import { DataTree } from '../src/semantics/data-tree.js';
import { decodeSnapshot, decodeSnapshotFile, encodeSnapshot, treeDigest, type LoadedSnapshot } from '../src/storage/snapshot.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-snapshot-window-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readOnly: readonly ACL[] = intern([{ perms: 1, id: { scheme: 'world', id: 'anyone' } }]);

function tree(): DataTree {
  const t = new DataTree(true);
  let z = 1n;
  t.create('/a', null, OPEN_ACL_UNSAFE, 0n, z++, 1000);
  t.create('/a/b', Buffer.alloc(0), OPEN_ACL_UNSAFE, 0n, z++, 1000);
  for (let i = 0; i < 300; i++) {
    // Data from nothing up to 5 KB (past the 1 KB window), bytes of every value.
    const data = Buffer.alloc((i * 37) % 5000, i);
    t.create(`/a/b/n${i}`, i % 7 === 0 ? null : data, i % 2 ? readOnly : OPEN_ACL_UNSAFE, 0n, z++, 1000 + i);
  }
  t.create('/é', Buffer.from([0, 255, 128]), OPEN_ACL_UNSAFE, 0n, z++, 5000);
  t.create('/é/ü', null, OPEN_ACL_UNSAFE, 0n, z, 5000);
  return t;
}

const bytes = (() => {
  const t = tree();
  return encodeSnapshot(
    {
      tree: t,
      sessions: new Map([
        [7n, 30_000],
        [8n, 4000],
      ]),
    },
    1000n,
  );
})();

function outcome(load: () => LoadedSnapshot): unknown {
  try {
    const s = load();
    const nodes = [...s.tree.nodes].map(([path, n]) => [path, n.data, n.stat(), n.acl, [...n.children]]);
    return { nodes, sessions: [...s.sessions], digest: s.digest, treeDigest: treeDigest(s.tree) };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message, offset: (err as { offset?: number }).offset };
  }
}

function viaFile(b: Buffer, windowBytes: number): unknown {
  const file = join(dir, 'snapshot');
  writeFileSync(file, b);
  return outcome(() => decodeSnapshotFile(file, true, windowBytes));
}

test('a file decoded through a small window gives the tree its bytes give in memory', () => {
  const inMemory = outcome(() => decodeSnapshot(bytes, true));
  expect((inMemory as { nodes: unknown[] }).nodes.length).toBe(308);
  for (const w of [1, 64, 1024, 1 << 22]) expect(viaFile(bytes, w)).toEqual(inMemory);
});

test('a cut or a changed byte is refused at the same offset through the window as in memory', () => {
  const cuts = [0, 3, 17, 40, 200, 1500, Math.floor(bytes.length / 2), bytes.length - 30, bytes.length - 6, bytes.length - 1];
  for (const at of cuts) {
    const cut = bytes.subarray(0, at);
    expect({ at, got: viaFile(cut, 256) }).toEqual({ at, got: outcome(() => decodeSnapshot(cut, true)) });
  }
  for (let i = 0; i < 40; i++) {
    const at = Math.floor((((i * 7919) % 1000) / 1000) * bytes.length);
    const changed = Buffer.from(bytes);
    changed[at] = changed[at]! ^ 0x5a;
    const expected = outcome(() => decodeSnapshot(changed, true));
    expect({ at, got: viaFile(changed, 256) }).toEqual({ at, got: expected });
  }
});
