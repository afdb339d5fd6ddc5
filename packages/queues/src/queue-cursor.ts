/**
 * A consumer's walk over a queue: one listing, sorted by the queue's order, taken front to back.
 * It lists again only when the batch is used up and the children have changed since (a FIFO queue's
 * new items always sort after the batch), or, for the priority queue, after `refreshAfter` items
 * once they have changed (Curator's refreshOnWatch). Items not yet due (delay queue) are skipped;
 * with nothing due it waits for a change or the first due time, whichever comes first.
 */
import { TimeoutError, type Client, type WaitScope } from '@tenure/client';
import type { ChildrenWatch } from './children-watch.js';

/** How a queue orders its children for consumers. */
export interface QueueOrder {
  /** The item names among `children` (foreign nodes left out), in the order consumers take them. */
  sort(children: readonly string[]): string[];
  /** Milliseconds until `name` is due; <= 0 when due now. Only the delay queue has future items. */
  dueInMs?(name: string): number;
  /** Re-list after this many items once the children have changed; default: only at the end of a batch. */
  refreshAfter?: number;
}

export class QueueCursor {
  private batch: string[] = [];
  private at = 0;
  private taken = 0;
  /** The watch's version at the last listing (-1: list first). */
  private listedAt = -1;
  /** The smallest delay of the items skipped as not yet due (ms from when it was seen). */
  private firstDueInMs = Infinity;

  constructor(
    private readonly client: Client,
    private readonly watch: ChildrenWatch,
    private readonly order: QueueOrder,
  ) {}

  /**
   * The next due item's name; call `advance(name)` once it is taken or gone. With `wait` false,
   * null when no item is due; otherwise waits under `scope`.
   */
  async next(scope: WaitScope, wait = true): Promise<string | null> {
    for (;;) {
      scope.check();
      const name = this.head();
      if (name !== null) return name;
      if (this.listedAt === this.watch.version) {
        if (!wait) {
          if (this.firstDueInMs === Infinity) return null;
        } else if (this.firstDueInMs === Infinity) {
          await this.watch.changedSince(this.listedAt, scope);
        } else {
          await this.changeOrDue(scope, this.firstDueInMs);
        }
      }
      await this.list(scope);
    }
  }

  /** `name`, which `next()` returned, is done with (taken or gone); a second call for it does nothing. */
  advance(name: string): void {
    if (this.batch[this.at] !== name) return;
    this.at++;
    this.taken++;
  }

  /** Drops the batch: the next call lists again (after an error). */
  reset(): void {
    this.batch = [];
    this.at = 0;
    this.listedAt = -1;
  }

  private head(): string | null {
    if (this.taken >= (this.order.refreshAfter ?? Infinity) && this.watch.version !== this.listedAt) return null;
    while (this.at < this.batch.length) {
      const name = this.batch[this.at]!;
      const due = this.order.dueInMs?.(name) ?? 0;
      if (due <= 0) return name;
      this.firstDueInMs = Math.min(this.firstDueInMs, due);
      this.at++;
    }
    return null;
  }

  private async list(scope: WaitScope): Promise<void> {
    const version = this.watch.version;
    const { children } = await this.watch.list(scope.signal);
    this.listedAt = version;
    this.batch = this.order.sort(children);
    this.at = 0;
    this.taken = 0;
    this.firstDueInMs = Infinity;
  }

  /** Waits for a change of the children or `ms`, whichever comes first (a timer on the client's clock, gone after). */
  private async changeOrDue(scope: WaitScope, ms: number): Promise<void> {
    using due = this.client.waitScope({ timeoutMs: ms, signal: scope.signal }, 'the next delayed item');
    try {
      await this.watch.changedSince(this.listedAt, due);
    } catch (err) {
      if (!(err instanceof TimeoutError) || scope.aborted) throw err;
    }
  }
}
