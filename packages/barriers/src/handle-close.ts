/**
 * What the barriers share: a handle's own close, joined to every wait it runs (the client's close
 * is joined by `client.waitScope` already), and a one-shot watch as a promise.
 */
import {
  ClosedError,
  WatcherType,
  unlimitedListeners,
  type Client,
  type WaitOptions,
  type WatchCallback,
  type WatchEvent,
} from '@tenure/client';

export class HandleClose {
  private readonly controller = new AbortController();

  constructor(private readonly what: string) {
    unlimitedListeners(this.controller.signal); // one listener per pending wait
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  /** Ends every wait joined so far with ClosedError. */
  close(): void {
    this.controller.abort(new ClosedError(this.what));
  }

  /** `options` whose signal also aborts when the handle closes; throws ClosedError once closed. */
  join(options: WaitOptions | undefined): WaitOptions {
    const own = this.controller.signal;
    if (own.aborted) throw own.reason as Error;
    return { ...options, signal: options?.signal ? AbortSignal.any([options.signal, own]) : own };
  }
}

/** A one-shot watch whose first event is a promise; `drop()` takes it back if it has not fired. */
export class OneShot {
  readonly watch: WatchCallback;
  readonly fired: Promise<WatchEvent>;
  private done = false;

  constructor() {
    let resolve!: (event: WatchEvent) => void;
    this.fired = new Promise((r) => (resolve = r));
    this.watch = (event) => {
      this.done = true;
      resolve(event);
    };
  }

  /**
   * For a wait that ended otherwise (passed, timed out): removes the watch from `view` on `path`,
   * so that a barrier waited on many times does not pile up callbacks. Never rejects.
   */
  drop(view: Client, path: string): void {
    if (this.done || view.closed) return;
    this.done = true;
    view.removeWatches(path, WatcherType.Any, { watcher: this.watch, quietly: true }).catch(() => {});
  }
}

/** For `.catch()`: swallows errors of `type`, rethrows the rest. */
export const unless =
  (type: abstract new (...args: never[]) => Error) =>
  (err: unknown): void => {
    if (!(err instanceof type)) throw err;
  };
