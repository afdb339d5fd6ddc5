import { OPEN_ACL_UNSAFE } from '@tenure/protocol';
import { expect, test } from 'vitest';
import { ZNode } from '../src/semantics/znode.js';

/** The signed high and unsigned low words of a zxid, as the fuzzy snapshot splits Z. */
const words = (z: bigint): [number, number] => [Number(BigInt.asIntN(64, z) >> 32n), Number(z & 0xffffffffn)];

test('czxidAtMost compares the two words as the 64-bit zxids compare, across the word boundary and past safe integers', () => {
  const zxids = [
    0n,
    1n,
    0x7fffffffn,
    0x80000000n,
    0xffffffffn,
    0x100000000n,
    0x1_7fffffffn,
    0x1_80000000n,
    2n ** 53n + 3n,
    2n ** 62n,
    -1n,
    -(2n ** 40n),
  ];
  for (const c of zxids) {
    const node = new ZNode(null, OPEN_ACL_UNSAFE, c, 0, 0n);
    expect(node.czxid).toBe(c);
    for (const z of zxids) expect(node.czxidAtMost(...words(z))).toBe(c <= z);
  }
});
