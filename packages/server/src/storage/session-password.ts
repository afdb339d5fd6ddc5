/**
 * ZooKeeper's session passwords (SessionTrackerImpl / ZooKeeperServer.generatePasswd): 16 bytes
 * of java.util.Random seeded with `sessionId ^ 0xB3415C00`. They are derived, never stored, so a
 * session read back from a snapshot or a log keeps its password, and a session created by
 * ZooKeeper keeps its password when tenure-server serves the dir (and the reverse).
 */
const MULT = 0x5deece66dn;
const MASK = (1n << 48n) - 1n;
const SUPER_SECRET = 0xb3415c00n;

export function sessionPassword(sessionId: bigint): Buffer {
  // new Random(seed): the scrambled seed; nextBytes: nextInt() per 4 bytes, low byte first.
  let seed = (BigInt.asUintN(64, sessionId ^ SUPER_SECRET) ^ MULT) & MASK;
  const out = Buffer.alloc(16);
  for (let i = 0; i < 16;) {
    seed = (seed * MULT + 0xbn) & MASK;
    let rnd = Number(BigInt.asIntN(32, seed >> 16n));
    for (let n = Math.min(16 - i, 4); n-- > 0; rnd >>= 8) out[i++] = rnd & 0xff;
  }
  return out;
}
