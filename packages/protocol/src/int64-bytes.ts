/**
 * Big-endian int64 <-> bigint through one shared BigInt64Array. Buffer's readBigInt64BE and
 * writeBigInt64BE build the value from several BigInt operations; going through a typed array is
 * several times faster, and a zxid or a Stat holds five of them. Writing wraps to 64 bits as Java does.
 */
const cell = new BigInt64Array(1);
const bytes = new Uint8Array(cell.buffer);
const littleEndianHost = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Reads the int64 at `at`; the caller has checked that 8 bytes are there. */
export function readInt64(buf: Uint8Array, at: number): bigint {
  if (littleEndianHost) {
    bytes[7] = buf[at]!;
    bytes[6] = buf[at + 1]!;
    bytes[5] = buf[at + 2]!;
    bytes[4] = buf[at + 3]!;
    bytes[3] = buf[at + 4]!;
    bytes[2] = buf[at + 5]!;
    bytes[1] = buf[at + 6]!;
    bytes[0] = buf[at + 7]!;
  } else {
    for (let i = 0; i < 8; i++) bytes[i] = buf[at + i]!;
  }
  return cell[0]!;
}

/** Writes `v` (wrapped to 64 bits) at `at`; the caller has made room for 8 bytes. */
export function writeInt64(buf: Uint8Array, at: number, v: bigint): void {
  cell[0] = v;
  if (littleEndianHost) {
    buf[at] = bytes[7]!;
    buf[at + 1] = bytes[6]!;
    buf[at + 2] = bytes[5]!;
    buf[at + 3] = bytes[4]!;
    buf[at + 4] = bytes[3]!;
    buf[at + 5] = bytes[2]!;
    buf[at + 6] = bytes[1]!;
    buf[at + 7] = bytes[0]!;
  } else {
    for (let i = 0; i < 8; i++) buf[at + i] = bytes[i]!;
  }
}
