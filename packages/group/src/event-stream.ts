/**
 * Events as async iterables: every iterator gets its own queue of the events pushed after it was
 * created, and ends when the stream ends (the recipe closed), its signal aborts, or the loop exits.
 */
export class EventStream<T> {
  private readonly subscribers = new Set<Subscriber<T>>();
  private ended = false;

  push(value: T): void {
    for (const s of this.subscribers) s.push(value);
  }

  end(): void {
    this.ended = true;
    for (const s of [...this.subscribers]) s.end();
  }

  /** A new iterator; `first` values are queued ahead of anything pushed later. */
  subscribe(signal?: AbortSignal, first: readonly T[] = []): AsyncIterableIterator<T> {
    const sub = new Subscriber<T>(() => this.subscribers.delete(sub));
    for (const v of first) sub.push(v);
    if (this.ended || signal?.aborted) sub.end();
    else {
      this.subscribers.add(sub);
      signal?.addEventListener('abort', () => sub.end(), { once: true });
    }
    return sub;
  }
}

class Subscriber<T> implements AsyncIterableIterator<T> {
  private queue: T[] = [];
  private readonly readers: Array<(r: IteratorResult<T>) => void> = [];
  private done = false;

  constructor(private readonly detach: () => void) {}

  push(value: T): void {
    if (this.done) return;
    const reader = this.readers.shift();
    if (reader) reader({ done: false, value });
    else this.queue.push(value);
  }

  /** Ends after the queued values are read. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.detach();
    for (const r of this.readers.splice(0)) r({ done: true, value: undefined });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.queue.shift()! });
    if (this.done) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => this.readers.push(resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.queue = [];
    this.end();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
