/**
 * The queue under every lock here (Curator's LockInternals), over the client's sequence queue
 * (`@tenure/client` sequence-queue.ts: order, predecessor wait, abandon):
 *
 * 1. Create `<base>/_c_<uuid>-<lockName><10-digit seq>` EPHEMERAL_SEQUENTIAL with a protected
 *    create (a lost reply is recovered by finding our uuid; a failed create leaves no orphan),
 *    under container parents. The create2 reply carries our Stat: its czxid is the fencing token,
 *    its ephemeralOwner must be our session.
 * 2. List the children. The first listing is sent right behind the create, so in the common case
 *    both answers come back in one round trip. Sort by the sequence after the lock name.
 * 3. The recipe's rule decides from that order: granted, or the one node to watch (for a mutex, our
 *    immediate predecessor: each release wakes exactly one waiter, no herd). Wait for it, list again.
 * 4. Timeout, abort or failure: abandon our node (guaranteed delete, awaited while connected), so no
 *    orphan holds up the queue. If the session is lost while we wait, our node went with it: start
 *    again with a new node, at the back of the queue.
 */
import {
  ConnectionState,
  CreateMode,
  NoNodeError,
  SessionExpiredError,
  abandonNode,
  newProtectedId,
  sortBySequence,
  waitForPredecessor,
  type Client,
  type Logger,
  type NodeData,
  type Stat,
  type WaitScope,
} from '@tenure/client';
import { HeldNode, type HeldNodeOptions } from './held-node.js';
import { nextTurn } from './next-turn.js';

export type Decision = { granted: true } | { granted: false; watch: string };

export interface QueueSpec {
  /** The queue's parent node. */
  basePath: string;
  /** 'lock-', '__READ__', '__WRIT__'. */
  lockName: string;
  data: NodeData | null;
  /**
   * Create an EPHEMERAL node with this sequence in place of an EPHEMERAL_SEQUENTIAL one (Curator's
   * read lock taken by the write lock's holder sorts at the writer's sequence).
   */
  fixedSequence?: string;
  /** Orders two child names: by the sequence after the lock name. */
  sortKey: (name: string) => string;
  /** The recipe's rule, over the children sorted by sortKey. */
  decide(sorted: readonly string[], ourName: string): Decision;
  held?: HeldNodeOptions;
  logger: Logger;
  /** Creates our node in place of the protected `<lockName>` create (kazoo's layout names its nodes itself). */
  create?: (scope: WaitScope) => Promise<{ path: string; stat: Stat }>;
}

const settle = (): Promise<void> => new Promise((r) => nextTurn(r));

/** Enters the queue and waits until the rule grants us the lock; returns our node, now held. */
export async function joinQueue(client: Client, spec: QueueSpec, scope: WaitScope): Promise<HeldNode> {
  for (;;) {
    scope.check();
    const held = await attempt(client, spec, scope);
    if (held) return held;
    // Our node is gone (the session was lost, or someone deleted it): queue again.
  }
}

/** One node's life in the queue: the held node, or null when the node vanished and we must start over. */
async function attempt(client: Client, spec: QueueSpec, scope: WaitScope): Promise<HeldNode | null> {
  const nodePath = `${spec.basePath}/${spec.lockName}${spec.fixedSequence ?? ''}`;
  const mode = spec.fixedSequence === undefined ? CreateMode.EPHEMERAL_SEQUENTIAL : CreateMode.EPHEMERAL;
  const creating = spec.create
    ? spec.create(scope)
    : client.create(nodePath, spec.data, { mode, protection: newProtectedId(), createParentContainers: true, signal: scope.signal });
  // Awaited below; until then (the settle) an abort's rejection must not count as unhandled.
  creating.catch(() => {});
  // Let the create reach the connection first, then pipeline the listing behind it.
  let listing: Promise<string[] | null> | null = null;
  if (client.isConnected && spec.fixedSequence === undefined) {
    await settle();
    listing = client.getChildren(spec.basePath).then(
      (r) => r.children,
      () => null,
    );
  }
  let created: { path: string; stat: Stat };
  try {
    created = await creating;
  } catch (err) {
    // The client's protected create deletes whatever an unanswered create may have left.
    if (scope.aborted) throw scope.reason;
    if (err instanceof SessionExpiredError) return null;
    throw err;
  }
  const ourPath = created.path;
  const ourName = ourPath.slice(ourPath.lastIndexOf('/') + 1);
  const session = created.stat.ephemeralOwner;
  if (session !== client.sessionId) return null; // created in a session that has ended since

  try {
    let children = listing ? await listing : null;
    for (;;) {
      if (children === null || !children.includes(ourName)) {
        // The pipelined listing missed us (it overtook the create) or is stale: list again.
        children = await listChildren(client, spec.basePath, scope);
        if (children === null || !children.includes(ourName)) return null;
      }
      if (client.sessionId !== session) return null;
      const decision = spec.decide(sortBySequence(children, spec.sortKey), ourName);
      if (decision.granted) {
        const held = await grant(client, spec, ourPath, created.stat, scope);
        if (held !== undefined) return held;
        children = null; // the connection went meanwhile: check again
        continue;
      }
      children = null;
      if (!(await waitForPredecessor(client, `${spec.basePath}/${decision.watch}`, session, scope))) return null;
    }
  } catch (err) {
    await abandonNode(client, ourPath, session, { logger: spec.logger });
    if (scope.aborted) throw scope.reason;
    if (err instanceof SessionExpiredError) return null;
    throw err;
  }
}

/**
 * Grants the lock to our node: at once on a healthy connection, or, after an error state, once
 * reconnected and the node is confirmed to be ours. Returns undefined to ask for a fresh listing.
 */
async function grant(client: Client, spec: QueueSpec, ourPath: string, stat: Stat, scope: WaitScope): Promise<HeldNode | undefined> {
  scope.check();
  const session = stat.ephemeralOwner;
  const state = client.state;
  if (state !== null && (client.isErrorState(state) || state === ConnectionState.READ_ONLY)) {
    await client.waitForState(ConnectionState.CONNECTED, { signal: scope.signal }).catch(() => scope.check());
    scope.check();
    const now = await client.exists(ourPath);
    if (now === null || now.ephemeralOwner !== session || client.sessionId !== session) throw new SessionExpiredError(ourPath);
    return undefined;
  }
  if (client.sessionId !== session) throw new SessionExpiredError(ourPath);
  // Built synchronously with the decision, so no state change can slip between the two.
  const held = new HeldNode(client, ourPath, stat, spec.held);
  if (!held.isHeld()) throw new SessionExpiredError(ourPath);
  return held;
}

/** The children, or null when the queue's parent is gone (and our node with it). */
async function listChildren(client: Client, basePath: string, scope: WaitScope): Promise<string[] | null> {
  scope.check();
  try {
    return (await client.getChildren(basePath)).children;
  } catch (err) {
    if (err instanceof NoNodeError) return null;
    throw err;
  }
}
