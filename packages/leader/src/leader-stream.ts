/**
 * The leaders an observer has seen, as async iterables: each iterator gets its own queue of the
 * leaders pushed after it was made (the current one first, when there is one). An iterator ends
 * (`done`) when the stream ends (the observer closed), its signal aborts or the loop exits; when
 * the stream fails (the client closed: ClosedError), it yields what it holds, then rejects once.
 */
export class LeaderStream<T> {
  private readonly subscribers = new Set<Subscriber<T>>();
  private ending: { error: Error | null } | null = null;

  /** How many iterators are open (for tests and close-time checks). */
  get size(): number {
    return this.subscribers.size;
  }

  push(value: T): void {
    for (const s of this.subscribers) s.push(value);
  }

  /** Ends every iterator: `done` after what it holds, or, with `error`, that rejection. */
  end(error: Error | null = null): void {
    if (this.ending) return;
    this.ending = { error };
    for (const s of [...this.subscribers]) s.end(error);
  }

  /** A new iterator; `first` values are queued ahead of anything pushed later. */
  subscribe(signal?: AbortSignal, first: readonly T[] = []): AsyncIterableIterator<T> {
    const sub = new Subscriber<T>(() => this.subscribers.delete(sub));
    for (const v of first) sub.push(v);
    if (this.ending) sub.end(this.ending.error);
    else if (signal?.aborted) sub.end(null);
    else {
      this.subscribers.add(sub);
      if (signal) {
        const onAbort = (): void => sub.end(null);
        signal.addEventListener('abort', onAbort, { once: true });
        sub.onDetach(() => signal.removeEventListener('abort', onAbort));
      }
    }
    return sub;
  }
}

class Subscriber<T> implements AsyncIterableIterator<T> {
  private queue: T[] = [];
  private readonly readers: Array<{ resolve: (r: IteratorResult<T>) => void; reject: (e: Error) => void }> = [];
  private finished = false;
  /** The rejection still owed to the next read (once). */
  private error: Error | null = null;
  private readonly detachers: Array<() => void> = [];

  constructor(detach: () => void) {
    this.detachers.push(detach);
  }

  onDetach(fn: () => void): void {
    this.detachers.push(fn);
  }

  push(value: T): void {
    if (this.finished) return;
    const reader = this.readers.shift();
    if (reader) reader.resolve({ done: false, value });
    else this.queue.push(value);
  }

  end(error: Error | null): void {
    if (this.finished) return;
    this.finished = true;
    for (const d of this.detachers.splice(0)) d();
    const readers = this.readers.splice(0);
    if (error !== null && readers.length > 0) {
      readers[0]!.reject(error);
      for (const r of readers.slice(1)) r.resolve({ done: true, value: undefined });
    } else {
      this.error = error;
      for (const r of readers) r.resolve({ done: true, value: undefined });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.queue.shift()! });
    if (this.finished) {
      const error = this.error;
      this.error = null;
      return error ? Promise.reject(error) : Promise.resolve({ done: true, value: undefined });
    }
    return new Promise((resolve, reject) => this.readers.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.queue = [];
    this.end(null);
    this.error = null;
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
