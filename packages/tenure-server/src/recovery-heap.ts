/**
 * V8's heap around recovery, which allocates a tree that all survives.
 *
 * - The young generation: V8 reads a high survival rate as a reason to grow it, here from 1 MB to
 *   16 MB semispaces (32 MB committed), and an idle server never shrinks it back. Every survivor is
 *   copied out of it whatever its size, so recovery gains nothing from the growth: it is held at its
 *   initial size until recovery ends, then V8's own policy applies again. 25-40 MB of RSS after a
 *   restart at 200k to 1M nodes, for no measured change in the restart's time.
 * - One full collection after recovery: the file buffers and decode temporaries are garbage, and a
 *   server that then sits idle allocates too little for V8 to collect them soon.
 *
 * Both use V8 flags set at run time (the bin takes no node flags; and V8 raises a growth factor
 * below 2 given on the command line to 2, not one set later). Where that fails, nothing happens.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's default factor (heap/heap.h in Node 20's V8): each growth doubles the semispaces. */
const DEFAULT_GROWTH_FACTOR = 2;

let gc: (() => void) | null | undefined;

function setFlag(flag: string): void {
  try {
    setFlagsFromString(flag);
  } catch {
    // an unknown flag in another V8: the heap keeps its defaults
  }
}

/** Keeps the young generation at its size now until `endRecovery`. */
export function beginRecovery(): void {
  setFlag('--semi-space-growth-factor=1');
}

/** Lets the young generation grow again; with `collect`, one full collection first. */
export function endRecovery(collect: boolean): void {
  if (collect) collectGarbage();
  setFlag(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
}

function collectGarbage(): void {
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
