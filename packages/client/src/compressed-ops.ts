/** The client's compression hooks: a write's data compressed before it is sent, reads decompressed after. */
import { asError } from '@tenure/protocol';
import type { MultiReadOp, MultiReadResult } from './client.js';
import type { Compression } from './compression.js';
import { toBuffer, type NodeData } from './request-size.js';

/** Compresses `data`, then runs the write with the compressed bytes. */
export function compressed<T>(
  compression: Compression,
  path: string,
  data: NodeData | null | undefined,
  what: string,
  write: (bytes: Buffer) => Promise<T>,
): Promise<T> {
  try {
    return compression.compress(path, toBuffer(data, what)).then(write);
  } catch (err) {
    return Promise.reject(asError(err));
  }
}

/** Decompresses the getData results of a multiRead whose op asked for it (or by default). */
export async function decompressReads(
  compression: Compression,
  ops: readonly MultiReadOp[],
  results: MultiReadResult[],
): Promise<MultiReadResult[]> {
  return Promise.all(
    results.map(async (r, i) => {
      const op = ops[i]!;
      if (r.type !== 'getData' || op.type !== 'getData' || !compression.applies(op.decompressed)) return r;
      return { ...r, data: await compression.decompress(r.path, r.data) };
    }),
  );
}
