/**
 * One full garbage collection, for after recovery: loading a snapshot and replaying the log leave
 * the file buffers and decode temporaries for the collector, and a server that then sits idle
 * allocates too little for V8 to run one soon, so its RSS stays at the peak of the load. The
 * `gc` function comes from V8's --expose-gc flag set at run time (the bin takes no node flags);
 * where that fails, nothing happens.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const fn: unknown = runInNewContext('gc');
      gc = typeof fn === 'function' ? (fn as () => void) : null;
    } catch {
      gc = null;
    }
  }
  gc?.();
}
