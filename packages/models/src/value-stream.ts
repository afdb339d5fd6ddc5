/**
 * Values as async iterables: every iterator gets its own queue of what was pushed after it was
 * made. It ends when the stream ends (its owner closed), its signal aborts or the loop leaves; a
 * failure (the client closed, a node that fails its schema) is thrown by the next `next()` once
 * the queued values are read, and ends it.
 */
export class ValueStream<T> {
  private readonly subscribers = new Set<Subscriber<T>>();
  private finished: { error?: Error } | undefined;

  get size(): number {
    return this.subscribers.size;
  }

  push(value: T): void {
    for (const s of this.subscribers) s.push(value);
  }

  /** Ends every iterator, now and later ones. */
  end(): void {
    this.finish({});
  }

  /** Every iterator throws `error` after its queued values, and ends. */
  fail(error: Error): void {
    this.finish({ error });
  }

  /** A new iterator. `onDone` runs once when it ends, by any cause. */
  subscribe(signal?: AbortSignal, onDone?: () => void): ValueIterator<T> {
    const sub = new Subscriber<T>(() => {
      this.subscribers.delete(sub);
      signal?.removeEventListener('abort', abort);
      onDone?.();
    });
    const abort = (): void => sub.end();
    if (this.finished) sub.finish(this.finished.error);
    else if (signal?.aborted) sub.end();
    else {
      this.subscribers.add(sub);
      signal?.addEventListener('abort', abort, { once: true });
    }
    return sub;
  }

  private finish(how: { error?: Error }): void {
    if (this.finished) return;
    this.finished = how;
    for (const s of [...this.subscribers]) s.finish(how.error);
  }
}

export type ValueIterator<T> = AsyncIterableIterator<T> & { return(): Promise<IteratorResult<T>> };

class Subscriber<T> implements AsyncIterableIterator<T> {
  private queue: T[] = [];
  private readers: Array<{ resolve: (r: IteratorResult<T>) => void; reject: (e: Error) => void }> = [];
  private done = false;
  private error: Error | undefined;

  constructor(private readonly detach: () => void) {}

  push(value: T): void {
    if (this.done) return;
    const reader = this.readers.shift();
    if (reader) reader.resolve({ done: false, value });
    else this.queue.push(value);
  }

  end(): void {
    this.finish(undefined);
  }

  /** Ends after the queued values are read, throwing `error` first if there is one. */
  finish(error: Error | undefined): void {
    if (this.done) return;
    this.done = true;
    this.error = error;
    this.detach();
    for (const r of this.readers.splice(0)) {
      if (this.error) {
        r.reject(this.error);
        this.error = undefined;
      } else r.resolve({ done: true, value: undefined });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.queue.shift()! });
    if (this.done) {
      const error = this.error;
      this.error = undefined;
      return error ? Promise.reject(error) : Promise.resolve({ done: true, value: undefined });
    }
    return new Promise((resolve, reject) => this.readers.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.queue = [];
    this.finish(undefined);
    this.error = undefined;
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
