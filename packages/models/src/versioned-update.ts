/**
 * `update(fn)`: a versioned read-modify-write, as Curator's VersionedModeledFramework is used.
 *
 * Protocol:
 * 1. Read the node (getData): its value (checked by the schema) and its version. A missing node
 *    is a NoNodeError, unless `initial` is given: then `fn(initial)` is created.
 * 2. `fn(current)` gives the next value; the schema checks it (ModelValidationError, nothing
 *    written).
 * 3. Write it on condition: setData with the version read, or create for a missing node, both
 *    with the client's `retryAmbiguousWrites: 'prove'` whatever the client's own setting: a write
 *    whose reply was lost and whose retry fails is proven not applied (the conflict stands), or is
 *    the client's OutcomeUnknownError, and `fn` is not run again on a guess.
 * 4. BadVersion, NoNode or NodeExists means someone wrote between 1 and 3: go to 1 after a pause
 *    of 0-4 ms of jitter (none before the first retry), up to `maxAttempts` (UpdateConflictError).
 */
import { BadVersionError, NoNodeError, NodeExistsError, type Client, type Stat, type WaitOptions } from '@tenure/client';
import { UpdateConflictError } from './errors.js';

export interface UpdateSteps<V> {
  /** Step 1: the node's value and stat, or undefined when it is missing. */
  read(signal: AbortSignal): Promise<{ value: V; stat: Stat } | undefined>;
  /** Step 2: the schema's output for fn's value, and its bytes (ModelValidationError if it fails). */
  check(value: unknown): Promise<{ value: V; bytes: Uint8Array }>;
  /** Step 3 for an existing node: setData at `version`. */
  write(bytes: Uint8Array, version: number, signal: AbortSignal): Promise<Stat>;
  /** Step 3 for a missing node: create. */
  create(bytes: Uint8Array, signal: AbortSignal): Promise<Stat>;
}

export interface UpdateOptions<V> extends WaitOptions {
  /** When the node is missing, `fn(initial)` is created. Without it a missing node is a NoNodeError. */
  initial?: V;
  /** How many read-modify-write rounds before UpdateConflictError. Default: no limit (bounded by `timeoutMs` and `signal`). */
  maxAttempts?: number;
}

const isConflict = (err: unknown): boolean =>
  err instanceof BadVersionError || err instanceof NoNodeError || err instanceof NodeExistsError;

export async function versionedUpdate<V, N>(
  client: Client,
  path: string,
  steps: UpdateSteps<V>,
  fn: (current: V, stat: Stat | undefined) => N | Promise<N>,
  options: UpdateOptions<V> = {},
): Promise<{ value: V; stat: Stat }> {
  const maxAttempts = options.maxAttempts ?? Infinity;
  using scope = client.waitScope(options, `update ${path}`);
  for (let attempt = 1; ; attempt++) {
    scope.check();
    const current = await scope.race(steps.read(scope.signal));
    if (current === undefined && !('initial' in options)) throw new NoNodeError(path);
    const next = await scope.race(Promise.resolve(fn(current ? current.value : (options.initial as V), current?.stat)));
    const checked = await scope.race(steps.check(next));
    try {
      const bytes = checked.bytes;
      const stat = await scope.race(current ? steps.write(bytes, current.stat.version, scope.signal) : steps.create(bytes, scope.signal));
      return { value: checked.value, stat };
    } catch (err) {
      if (!isConflict(err)) throw err; // OutcomeUnknownError among them: the client could not prove it did not land
    }
    if (attempt >= maxAttempts) throw new UpdateConflictError(path, attempt);
    await scope.race(pause(client, attempt === 1 ? 0 : Math.floor(Math.random() * 5), scope.signal));
  }
}

function pause(client: Client, ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = client.clock.setTimeout(done, ms);
    function done(): void {
      signal.removeEventListener('abort', done);
      client.clock.clearTimeout(timer);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
