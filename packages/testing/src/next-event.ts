/**
 * Awaiting the event that causes a condition, instead of polling for the condition: the listener
 * is attached when `nextEvent` is called, so call it before the action that triggers the event.
 */
import { asError, TimeoutError } from '@tenure/protocol';

// Emitters type their listeners every which way; `any` lets each of them in.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyListener = (...args: any[]) => void;

/** Anything with Node/eventemitter3-style `on` and `off` (or `removeListener`). */
export interface EventSource {
  on(name: string, listener: AnyListener): unknown;
  off?(name: string, listener: AnyListener): unknown;
  removeListener?(name: string, listener: AnyListener): unknown;
}

export interface NextEventOptions {
  /** Real milliseconds before the promise rejects naming the event (default 5,000); the timer is unref'd. */
  timeoutMs?: number;
}

/**
 * Resolves with the first argument of the next `name` event whose arguments satisfy `predicate`
 * (any event when omitted); rejects after `timeoutMs`. The listener is removed either way.
 */
export function nextEvent<T = unknown>(
  emitter: EventSource,
  name: string,
  predicate?: (value: T, ...rest: unknown[]) => boolean,
  options: NextEventOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise<T>((resolve, reject) => {
    const detach = (): void => {
      clearTimeout(timer);
      if (emitter.off) emitter.off(name, listener);
      else emitter.removeListener?.(name, listener);
    };
    const listener = (value: T, ...rest: unknown[]): void => {
      let matched: boolean;
      try {
        matched = predicate ? predicate(value, ...rest) : true;
      } catch (err) {
        detach();
        reject(asError(err));
        return;
      }
      if (!matched) return;
      detach();
      resolve(value);
    };
    const timer = setTimeout(() => {
      detach();
      reject(
        new TimeoutError(`timed out after ${timeoutMs} ms waiting for the '${name}' event${predicate ? ' matching the predicate' : ''}`),
      );
    }, timeoutMs);
    timer.unref?.();
    emitter.on(name, listener);
  });
}
