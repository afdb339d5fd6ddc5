/** Emitting events so that a listener's exception cannot break the recipe: it becomes an `error` event. */
import type { EventEmitter } from 'eventemitter3';
import type { Logger } from '@tenure/client';
import { asError } from '@tenure/client';

type Listeners = { error(error: Error): void };
type Args<F> = F extends (...args: infer A) => void ? A : never;

export type SafeEmit<Events extends Listeners> = <E extends keyof Events & string>(event: E, ...args: Args<Events[E]>) => void;

/** `emitter.emit`, made safe: a listener's exception is logged and emitted as `error` (one thrown by an `error` listener is dropped). */
export function safeEmitter<Events extends Listeners>(emitter: EventEmitter<Events>, logger: Logger): SafeEmit<Events> {
  // Looked up at each call, as `this.emit` would be.
  const emit = (event: string, ...args: unknown[]): boolean =>
    (emitter.emit as (e: string, ...a: unknown[]) => boolean).call(emitter, event, ...args);
  return (event, ...args) => {
    try {
      emit(event, ...args);
    } catch (err) {
      if (event === 'error') return;
      logger.warn({ err, event }, 'a listener threw');
      try {
        emit('error', asError(err));
      } catch {
        // nothing more to do
      }
    }
  };
}
