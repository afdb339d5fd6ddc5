/**
 * The one lifecycle of every recipe: `'latent'` → `start()` → `'started'` → `close()` → `'closed'`.
 * A recipe holds one RecipeLifecycle and hands it what its own start and close do; the rules (a
 * second start, a start after close, an idempotent close) are kept here, once.
 */
import { IllegalStateError } from '@tenure/protocol';

/** Where a recipe is in its life; a recipe's state of its own (leadership, a conflict) is named apart. */
export type RecipeState = 'latent' | 'started' | 'closed';

/** What every recipe with a lifecycle offers. */
export interface RecipeHandle extends AsyncDisposable {
  readonly state: RecipeState;
  start(): Promise<void>;
  close(): Promise<void>;
}

export class RecipeLifecycle {
  private current: RecipeState = 'latent';
  private closing: Promise<void> | null = null;

  /** @param what names the recipe in the IllegalStateError messages, e.g. `LeaderLatch /election`. */
  constructor(readonly what: string) {}

  get state(): RecipeState {
    return this.current;
  }

  get isStarted(): boolean {
    return this.current === 'started';
  }

  get isClosed(): boolean {
    return this.current === 'closed';
  }

  /**
   * `'latent'` → `'started'`, then `run()` (the recipe's own start; its result is start's). A
   * second start, or one after close, rejects with IllegalStateError and runs nothing.
   * `precondition` runs first: when it throws (e.g. ClosedError for a closed client), start
   * rejects with that and the recipe stays `'latent'`.
   */
  start(run: () => Promise<void> | void, precondition?: () => void): Promise<void> {
    if (this.current !== 'latent') {
      return Promise.reject(
        new IllegalStateError(
          `${this.what}: ${this.current === 'started' ? 'already started' : 'start() after close(): already closed'} (a recipe cannot be started more than once)`,
        ),
      );
    }
    try {
      precondition?.();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    this.current = 'started';
    try {
      return Promise.resolve(run());
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /**
   * `'closed'` at once, then `run(wasStarted)` (the recipe's own release), called once: later
   * calls return the same promise.
   */
  close(run: (wasStarted: boolean) => Promise<void> | void): Promise<void> {
    if (this.closing) return this.closing;
    const wasStarted = this.current === 'started';
    this.current = 'closed';
    try {
      this.closing = Promise.resolve(run(wasStarted));
    } catch (err) {
      this.closing = Promise.reject(err as Error);
    }
    return this.closing;
  }

  /** Throws IllegalStateError unless started: for operations that need a started recipe. */
  requireStarted(operation: string): void {
    if (this.current !== 'started')
      throw new IllegalStateError(`${this.what}: ${operation}() ${this.current === 'latent' ? 'before start()' : 'after close()'}`);
  }
}
