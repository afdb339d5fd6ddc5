/**
 * The conditional writes in flight in this process, per counter path: contenders that share an
 * event loop step in time (their replies land in one turn, their pauses end in one turn), so a
 * contender that re-reads while a neighbour's write is in flight reads the old version and loses
 * again. Waiting for those writes to settle before a read breaks the lockstep (bench/counters.ts
 * counts the requests per increment). Timing only: the versioned write still decides.
 */
const inFlight = new Map<string, Set<Promise<unknown>>>();

/** Registers `write` for `path` until it settles; returns it. */
export function trackWrite<T>(path: string, write: Promise<T>): Promise<T> {
  let set = inFlight.get(path);
  if (set === undefined) inFlight.set(path, (set = new Set()));
  set.add(write);
  const done = (): void => {
    set.delete(write);
    if (set.size === 0 && inFlight.get(path) === set) inFlight.delete(path);
  };
  write.then(done, done);
  return write;
}

/** Resolves once the writes on `path` in flight now have settled (at once when there are none). */
export function writesSettled(path: string): Promise<void> | undefined {
  const set = inFlight.get(path);
  if (set === undefined || set.size === 0) return undefined;
  return Promise.allSettled([...set]).then(() => undefined);
}
