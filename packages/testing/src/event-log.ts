/**
 * An array that announces its pushes, for tests that record events (watch callbacks, listener
 * calls) and then need "once three have arrived": `until` resolves on the push that makes the
 * predicate hold, never by polling. It stays an array, so `expect(log).toEqual([...])` reads as before.
 */
import { EventEmitter } from 'node:events';
import { nextEvent, type NextEventOptions } from './next-event.js';

export class EventLog<T> extends Array<T> {
  // map/filter/slice give plain arrays: those copies announce nothing.
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  readonly #pushed = new EventEmitter();

  constructor() {
    super();
  }

  override push(...items: T[]): number {
    const n = super.push(...items);
    this.#pushed.emit('push');
    return n;
  }

  /** Resolves once `predicate(log)` holds: now, or on the push that makes it so (rejects after `timeoutMs`). */
  async until(predicate: (log: readonly T[]) => boolean, options?: NextEventOptions): Promise<this> {
    if (!predicate(this)) await nextEvent(this.#pushed, 'push', () => predicate(this), options);
    return this;
  }

  /** Resolves once the log holds at least `n` items. */
  atLeast(n: number, options?: NextEventOptions): Promise<this> {
    return this.until((log) => log.length >= n, options);
  }
}
