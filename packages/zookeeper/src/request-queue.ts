/**
 * The FIFO of requests awaiting a reply. A growable ring buffer: pipelined traffic pushes and shifts
 * thousands of entries per second, and Array.prototype.shift is O(n) on large arrays.
 */
import type { Reply } from '@tenure/protocol';

export interface PendingRequest {
  xid: number;
  /** The op code, needed to decode the reply body and to strip the chroot from it. */
  type: number;
  /** For error messages. */
  path: string | undefined;
  resolve(reply: Reply): void;
  /** Called synchronously with the reply, before any later frame is handled (see Connection.send). */
  onReply?: ((reply: Reply) => void) | undefined;
  reject(error: Error): void;
}

export class RequestQueue {
  private items = new Array<PendingRequest | undefined>(64);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(item: PendingRequest): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & (this.items.length - 1)] = item;
    this.count++;
  }

  peek(): PendingRequest | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  shift(): PendingRequest | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
    return item;
  }

  /** Removes and returns every entry, oldest first. */
  drain(): PendingRequest[] {
    const out: PendingRequest[] = [];
    for (let item = this.shift(); item; item = this.shift()) out.push(item);
    return out;
  }

  private grow(): void {
    // Capacity stays a power of two so the index math is a mask.
    const next = new Array<PendingRequest | undefined>(this.items.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) & (this.items.length - 1)];
    this.items = next;
    this.head = 0;
  }
}
