/**
 * The sequence queue: what every queue-shaped recipe (locks, semaphores, leader election) does
 * with its EPHEMERAL_SEQUENTIAL nodes, written once.
 *
 * Protocol (Curator's LockInternals and LeaderLatch share it):
 * 1. Each participant creates `<base>/<prefix><name><10-digit seq>` (the recipe does this, usually
 *    with a protected create: the prefix is `_c_<uuid>-`).
 * 2. Order: the children sorted by the part after the last occurrence of the recipe's name
 *    (Curator's standardFixForSorting), a stable sort, so equal keys keep the server's order.
 * 3. Position (Curator's maxLeases rule): our node is granted when its index is below maxLeases
 *    (1 for a mutex or a leader); otherwise it watches the node maxLeases places ahead of it, so
 *    each departure wakes exactly one waiter (no herd).
 * 4. Wait for the predecessor: a getData watch (it leaves no watch behind when the node is already
 *    gone), set through a `trackingWatches()` view so that giving up takes it back with
 *    removeAllWatches, on the server too. The wait also ends when our session does.
 * 5. Abandon: a node we give up is deleted with a guaranteed delete. While connected we wait until
 *    it is gone, so a timed-out wait returns with nothing left behind; while disconnected the delete
 *    goes on in the background (`client.pendingDeletes`) and ends with the session at the latest.
 */
import { NoNodeError } from '@tenure/protocol';
import type { Client } from './client.js';
import { ConnectionState } from './connection-state.js';
import type { Logger } from './logger.js';
import type { WaitScope } from './wait-scope.js';
import type { WatchCallback, WatchEvent } from './watch-events.js';

/** Curator's standardFixForSorting: the part of `name` after the last occurrence of `lockName`. */
export function sequenceAfter(name: string, lockName: string): string {
  const i = name.lastIndexOf(lockName);
  return i < 0 ? name : name.slice(i + lockName.length);
}

/** Children in queue order: by `sequenceAfter(child, lockName)`, or by a key of the recipe's own. Stable. */
export function sortBySequence(children: readonly string[], lockName: string | ((name: string) => string)): string[] {
  const key = typeof lockName === 'string' ? (n: string) => sequenceAfter(n, lockName) : lockName;
  return children
    .map((name) => ({ name, key: key(name) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((e) => e.name);
}

/** Where our node stands: granted, or the node to watch. */
export type QueuePosition = { index: number; granted: true } | { index: number; granted: false; watch: string };

/** Curator's maxLeases rule over the sorted children; null when our node is not among them. */
export function queuePosition(sorted: readonly string[], ourName: string, maxLeases = 1): QueuePosition | null {
  const index = sorted.indexOf(ourName);
  if (index < 0) return null;
  return index < maxLeases ? { index, granted: true } : { index, granted: false, watch: sorted[index - maxLeases]! };
}

/** A watch on one node, set by watchNode. */
export interface NodeWatch {
  /** True once the watch has fired (then there is nothing to cancel). */
  readonly fired: boolean;
  /** Takes the watch back, on the server too, unless it has fired. Never rejects. */
  cancel(): Promise<void>;
}

/**
 * Sets a getData watch on `path` through a tracking view of `client`; `onChange` is called (at most
 * once, synchronously as the event arrives) when the node changes or goes. Resolves with the watch,
 * or null when the node is already gone (no watch is left then). The client registers the watch as
 * the reply comes off the wire, so an event right behind the read has fired by the time this returns.
 */
export async function watchNode(client: Client, path: string, onChange: (event: WatchEvent) => void): Promise<NodeWatch | null> {
  const view = client.trackingWatches();
  let fired = false;
  const callback: WatchCallback = (ev) => {
    if (ev.type === 'DataWatchRemoved' || ev.type === 'ChildWatchRemoved' || fired) return;
    fired = true;
    onChange(ev);
  };
  try {
    await view.getData(path, { watch: callback });
  } catch (err) {
    if (err instanceof NoNodeError) return null;
    throw err;
  }
  return {
    get fired() {
      return fired;
    },
    cancel: () => (fired ? Promise.resolve() : view.removeAllWatches()),
  };
}

/**
 * Watches the predecessor at `path` and waits until it changes or goes. Returns true then (or when
 * it is already gone), false when `session` ended meanwhile; throws the scope's reason when the
 * wait is over. The watch is taken back on every way out but its firing.
 */
export async function waitForPredecessor(client: Client, path: string, session: bigint, scope: WaitScope): Promise<boolean> {
  let changed = false;
  let wake: (() => void) | null = null;
  const watch = await watchNode(client, path, () => {
    changed = true;
    wake?.();
  });
  if (watch === null || changed) return true;
  const onState = (s: ConnectionState): void => {
    if (s === ConnectionState.LOST || (client.sessionId !== session && client.sessionId !== 0n)) wake?.();
  };
  const onAbort = (): void => wake?.();
  client.on('stateChanged', onState);
  scope.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await new Promise<void>((resolve) => {
      wake = resolve;
      if (scope.aborted || client.sessionId !== session) resolve();
    });
  } finally {
    client.off('stateChanged', onState);
    scope.signal.removeEventListener('abort', onAbort);
    wake = null;
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects (NodeWatch.cancel)
    void watch.cancel();
  }
  scope.check();
  return changed || client.sessionId === session;
}

export interface AbandonOptions {
  /** Wait (while connected) until the node is gone. Default true. */
  wait?: boolean;
  /** Where a delete that fails for good is reported (debug). */
  logger?: Logger;
}

/**
 * Deletes a node we give up, with a guaranteed delete, unless it went with an earlier session.
 * Resolves once it is gone, or at once when disconnected (or `wait: false`): the delete then goes
 * on in the background (`client.pendingDeletes`).
 */
export async function abandonNode(client: Client, path: string, session: bigint, options: AbandonOptions = {}): Promise<void> {
  if (client.closed) return;
  if (client.sessionId !== session && client.sessionId !== 0n) return; // the node went with its session
  // A guaranteed delete gives up only when the client closes or the server refuses for good
  // (NoAuth...): nothing more to do here than to say so.
  const deleting = client.delete(path, { guaranteed: true }).catch((err: unknown) => {
    if (!(err instanceof NoNodeError)) options.logger?.debug({ err, path }, 'deleting an abandoned node failed');
  });
  if (options.wait === false || !client.isConnected) return;
  let off: (() => void) | undefined;
  const disconnected = new Promise<void>((resolve) => {
    const onState = (s: ConnectionState): void => {
      if (s !== ConnectionState.CONNECTED && s !== ConnectionState.RECONNECTED) resolve();
    };
    client.on('stateChanged', onState);
    off = () => client.off('stateChanged', onState);
  });
  try {
    await Promise.race([deleting, disconnected]);
  } finally {
    off?.();
  }
}
