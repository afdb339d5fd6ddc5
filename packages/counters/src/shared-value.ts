/**
 * SharedValue (raw bytes) and SharedCount (a 4-byte big-endian int), Curator's recipes of the same
 * names. The node, the watch and the write protocol are in shared-node.ts.
 */
import type { Client } from '@tenure/client';
import { bytes, int32 } from './codecs.js';
import { SharedNode, type VersionedValue } from './shared-node.js';

/** A shared byte value every client sees (Curator's SharedValue). */
export class SharedValue extends SharedNode<Buffer> {
  constructor(client: Client, path: string, seed: Buffer) {
    super(client, path, Buffer.from(seed), bytes);
  }

  /** The cached value (a copy). */
  get value(): Buffer {
    return Buffer.from(this.getVersionedValue().value);
  }

  /**
   * Writes `newValue` if the node is still at `expected` (what getVersionedValue() returned): a
   * setData with `expected.version`. False if someone changed it since; the cache is then re-read.
   */
  trySetValue(newValue: Buffer, expected: VersionedValue<Buffer>): Promise<boolean> {
    return this.trySet(newValue, expected, 'trySetValue');
  }

  /** Writes `value` whatever the node holds. */
  setValue(value: Buffer): Promise<void> {
    return this.set(value, 'setValue');
  }
}

/**
 * A shared 32-bit count (Curator's SharedCount). Its `count` and `change` event are all that
 * @tenure/locks' Semaphore needs of a maximum.
 */
export class SharedCount extends SharedNode<number> {
  constructor(client: Client, path: string, seed: number) {
    super(client, path, int32.encode(seed), int32);
  }

  /** The cached count. */
  get count(): number {
    return this.getVersionedValue().value;
  }

  /** Writes `next` if the count is still at `expected`; false if someone changed it since. */
  trySetCount(next: number, expected: VersionedValue<number>): Promise<boolean> {
    return this.trySet(next, expected, 'trySetCount');
  }

  /** Writes `count` whatever the node holds. */
  setCount(count: number): Promise<void> {
    return this.set(count, 'setCount');
  }
}
