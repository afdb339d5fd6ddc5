/** Test helper: hex strings as docs/zookeeper-wire-protocol.md writes them ("00 00 | 2f 61"), to and from buffers. */
export function hex(s: string): Buffer {
  return Buffer.from(s.replace(/[^0-9a-f]/gi, ''), 'hex');
}
export function toHex(b: Buffer): string {
  return b.toString('hex').replace(/(..)(?!$)/g, '$1 ');
}
