/** Emitting an event so that a listener's exception cannot break the recipe: it becomes an `error` event. */
import type { Logger } from '@tenure/client';

interface Emitter {
  emit(event: string, ...args: unknown[]): boolean;
}

export function emitSafely(emitter: Emitter, logger: Logger | null, event: string, ...args: unknown[]): void {
  try {
    emitter.emit(event, ...args);
  } catch (err) {
    if (event === 'error') return;
    logger?.warn({ err, event }, 'a listener threw');
    try {
      emitter.emit('error', err instanceof Error ? err : new Error(String(err)));
    } catch {
      // nothing more to do
    }
  }
}
