/** Callers waiting for something a recipe will have (a join, a term): settled by notify(), or ended by their scope or close(). */
import type { WaitScope } from '@tenure/client';

export class Waiters<T> {
  private readonly waiting = new Set<(value: T) => void>();
  private readonly scopes = new Set<WaitScope>();

  /** Waits within `scope` (its timeout, signal, the client's close) for the next notify(). */
  async wait(scope: WaitScope): Promise<T> {
    this.scopes.add(scope);
    try {
      return await scope.until<T>((resolve) => {
        this.waiting.add(resolve);
        return () => this.waiting.delete(resolve);
      });
    } finally {
      this.scopes.delete(scope);
    }
  }

  notify(value: T): void {
    for (const resolve of [...this.waiting]) resolve(value);
  }

  /** Ends every pending wait with `reason`. */
  close(reason: Error): void {
    for (const scope of this.scopes) scope.abort(reason);
  }
}
