/**
 * Emitting a recipe's events so that a listener's exception cannot break the recipe's bookkeeping:
 * it is logged and emitted as `error` (an exception thrown by an `error` listener is dropped).
 */
import { asError } from '@tenure/protocol';
import type { Logger } from '../logger.js';

type Args<F> = F extends (...args: infer A) => void ? A : never;

/** `emit`, made safe, for an emitter whose events include `error(err)`. */
export type SafeEmit<Events extends { error(error: Error): void }> = <E extends keyof Events & string>(
  event: E,
  ...args: Args<Events[E]>
) => void;

/** What safeEmitter needs of an emitter (an eventemitter3 or node:events EventEmitter). */
export interface Emitting {
  emit(event: never, ...args: never[]): boolean;
}

export function safeEmitter<Events extends { error(error: Error): void }>(emitter: Emitting, logger?: Logger): SafeEmit<Events> {
  // Looked up at each call, as `this.emit` would be.
  const emit = (event: string, ...args: unknown[]): boolean =>
    (emitter.emit as unknown as (e: string, ...a: unknown[]) => boolean).call(emitter, event, ...args);
  return (event, ...args) => {
    try {
      emit(event, ...args);
    } catch (err) {
      if (event === 'error') return;
      logger?.warn({ err, event }, 'a listener threw');
      try {
        emit('error', asError(err));
      } catch {
        // nothing more to do
      }
    }
  };
}
