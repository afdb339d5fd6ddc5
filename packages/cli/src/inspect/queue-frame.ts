/**
 * Reading the items out of a DistributedQueue node, for display: Curator's ItemSerializer frame
 * (int32 0x00010001, then per item 0x01 + int32 length + bytes, then 0x02). A node that is not such
 * a frame (a SimpleDistributedQueue item is raw bytes) gives null, never an error.
 */
const FRAME_VERSION = 0x00010001;

/** The items of a frame, in order, or null when `data` is not a well-formed frame. */
export function frameItems(data: Buffer): Buffer[] | null {
  if (data.length < 5 || data.readInt32BE(0) !== FRAME_VERSION) return null;
  const items: Buffer[] = [];
  for (let at = 4; at < data.length;) {
    const op = data[at]!;
    if (op === 0x02) return items;
    if (op !== 0x01 || at + 5 > data.length) return null;
    const length = data.readInt32BE(at + 1);
    const start = at + 5;
    if (length < 0 || start + length > data.length) return null;
    items.push(data.subarray(start, start + length));
    at = start + length;
  }
  return null;
}
