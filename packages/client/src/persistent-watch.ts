/**
 * A persistent watch (addWatch) as an async iterable of events. It lives until `close()` (or the
 * client closes), survives reconnects, and yields `reset` when events may have been missed.
 */
import type { Namespace } from './namespace.js';
import type { PersistentWatchEvent, WatchEvent } from './watch-events.js';
import type { PersistentSink } from './watch-registry.js';

export interface PersistentWatch extends AsyncIterable<PersistentWatchEvent> {
  /** The watched path, in the namespace of the client that added it. */
  readonly path: string;
  readonly recursive: boolean;
  readonly closed: boolean;
  /** Removes the watch (client-side and on the server); iteration then ends. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export class PersistentWatchHandle implements PersistentWatch, PersistentSink, AsyncIterator<PersistentWatchEvent> {
  private queue: PersistentWatchEvent[] = [];
  private head = 0;
  private readonly readers: Array<(r: IteratorResult<PersistentWatchEvent>) => void> = [];
  private ended = false;
  private closing: Promise<void> | null = null;

  constructor(
    readonly path: string,
    /** Server path. */
    readonly fullPath: string,
    readonly recursive: boolean,
    readonly ns: Namespace,
    private readonly unregister: (handle: PersistentWatchHandle) => Promise<void>,
    private readonly listener: ((event: PersistentWatchEvent) => void) | undefined,
  ) {}

  get closed(): boolean {
    return this.ended;
  }

  deliver(event: WatchEvent): void {
    this.push(event);
  }

  reset(reason: 'LOST' | 'RECONNECTED'): void {
    this.push({ type: 'reset', path: this.path, reason });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const r of this.readers.splice(0)) r({ done: true, value: undefined });
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    const wasEnded = this.ended;
    this.end();
    this.queue = [];
    this.head = 0;
    return (this.closing = wasEnded ? Promise.resolve() : this.unregister(this));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<PersistentWatchEvent> {
    return this;
  }

  next(): Promise<IteratorResult<PersistentWatchEvent>> {
    if (this.head < this.queue.length) {
      const value = this.queue[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ done: false, value });
    }
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => this.readers.push(resolve));
  }

  /** Leaving a for-await loop (break, throw) closes the watch. */
  async return(): Promise<IteratorResult<PersistentWatchEvent>> {
    await this.close();
    return { done: true, value: undefined };
  }

  private push(event: PersistentWatchEvent): void {
    if (this.ended) return;
    if (this.listener) {
      this.listener(event);
      return;
    }
    const reader = this.readers.shift();
    if (reader) reader({ done: false, value: event });
    else this.queue.push(event);
  }
}
