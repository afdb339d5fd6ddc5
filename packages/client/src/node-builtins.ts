/**
 * Node's built-in modules, looked up at run time (`process.getBuiltinModule`, Node >= 20.16)
 * instead of imported, so the client's modules carry no `node:` import and a browser bundle holds
 * them unchanged. In Node these are the real modules; where there is no such module (browsers,
 * some edge runtimes) the answer is undefined and each caller does what a browser needs instead.
 */
import type * as DiagnosticsChannel from 'node:diagnostics_channel';
import type { EventEmitter as NodeEventEmitter } from 'node:events';
import type * as Zlib from 'node:zlib';

interface Builtins {
  'node:diagnostics_channel': typeof DiagnosticsChannel;
  'node:events': typeof NodeEventEmitter;
  'node:zlib': typeof Zlib;
}

const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;

/** The built-in module `id` in Node; undefined elsewhere. */
export function nodeBuiltin<K extends keyof Builtins>(id: K): Builtins[K] | undefined {
  return host?.getBuiltinModule?.(id) as Builtins[K] | undefined;
}

/**
 * Lets any number of listeners wait on `signal` without Node's MaxListenersExceededWarning (for a
 * signal every pending wait of a handle listens to). Nothing to do elsewhere: browsers do not
 * count an EventTarget's listeners.
 */
export function unlimitedListeners(signal: AbortSignal): void {
  nodeBuiltin('node:events')?.setMaxListeners(0, signal);
}
