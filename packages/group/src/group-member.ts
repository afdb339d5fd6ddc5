/**
 * GroupMember: this process as a member of a group, and the group's current membership, with
 * Curator's layout (Curator's GroupMember), so Curator's members and ours see each other.
 *
 * Nodes:
 * - `<membershipPath>/<memberId>`: EPHEMERAL, data = our payload. Kept by a PersistentNode: it
 *   comes back after a delete, a session expiry or an outage (with the rejoin jitter), and a node of
 *   another live session under our id (a duplicate member id) is never deleted: `conflict`.
 * - `<membershipPath>` and its ancestors: created as containers when missing, so an empty group
 *   leaves nothing behind.
 *
 * Membership is the children of `membershipPath`, mirrored by a TreeCache of depth 1 (one
 * persistent recursive watch, or one-shot watches on ZooKeeper 3.5). As in Curator, this member
 * is always in its own view, with its payload, even before its node exists.
 */
import { EventEmitter } from 'eventemitter3';
import {
  RecipeLifecycle,
  safeEmitter,
  type Client,
  type NodeData,
  type RecipeState,
  type SafeEmit,
  type WaitOptions,
  InvalidArgumentError,
} from '@tenure/client';
import { EventStream, TreeCache, type TreeCacheOptions } from '@tenure/cache';
import { PersistentNode, type PersistentNodeEvents, type PersistentNodeOptions } from '@tenure/nodes';
import { joinPath, validatePath } from '@tenure/protocol';
import { groupMembersChannel, type GroupMembersMessage } from './diagnostics.js';

export type Membership = Map<string, Buffer>;

/**
 * How our member node is kept (PersistentNode's rejoin jitter and retries; `logger` goes to both
 * the node and the cache) and how the membership is watched (`persistentWatches: false` on
 * ZooKeeper 3.5).
 */
export type GroupMemberOptions = Pick<PersistentNodeOptions, 'rejoinJitterMs' | 'retryPolicy' | 'retryMs' | 'maxRetryMs' | 'logger'> &
  Pick<TreeCacheOptions, 'persistentWatches'>;

/** `conflict` and `error` are our member node's (a duplicate member id is a conflict); `error` also the cache's. */
export interface GroupMemberEvents extends Pick<PersistentNodeEvents, 'conflict' | 'error'> {
  /** The membership changed (ids or payloads); a new snapshot. */
  change: (members: Membership) => void;
}

export class GroupMember extends EventEmitter<GroupMemberEvents> implements AsyncIterable<Membership> {
  readonly membershipPath: string;
  readonly memberId: string;
  private readonly node: PersistentNode;
  private readonly cache: TreeCache;
  private readonly stream = new EventStream<Membership>();
  private last: Membership | null = null;
  private readonly life: RecipeLifecycle;
  private readonly emitSafely: SafeEmit<GroupMemberEvents>;

  constructor(client: Client, membershipPath: string, memberId: string, payload: NodeData | null = null, options: GroupMemberOptions = {}) {
    super();
    validatePath(membershipPath);
    if (typeof memberId !== 'string' || memberId.length === 0 || memberId.includes('/')) {
      throw new InvalidArgumentError(`GroupMember: memberId must be a non-empty name without '/', got ${JSON.stringify(memberId)}`);
    }
    this.membershipPath = membershipPath;
    this.memberId = memberId;
    const { persistentWatches, ...keep } = options;
    const logger = options.logger ?? client.childLogger({ recipe: 'groupMember', path: membershipPath, memberId });
    this.life = new RecipeLifecycle(`GroupMember ${memberId} of ${membershipPath}`);
    this.emitSafely = safeEmitter<GroupMemberEvents>(this, logger);
    this.node = new PersistentNode(client, { ...keep, logger, path: joinPath(membershipPath, memberId), data: payload });
    this.cache = new TreeCache(client, membershipPath, { maxDepth: 1, persistentWatches, logger });
    this.node.on('conflict', (e) => this.emitSafely('conflict', e));
    this.node.on('error', (e) => this.emitSafely('error', e));
    this.cache.on('error', (e) => this.emitSafely('error', e));
    const changed = (): void => this.changed();
    this.cache.on('initialized', changed);
    this.cache.on('created', (n) => n.path !== membershipPath && changed());
    this.cache.on('changed', (n) => n.path !== membershipPath && changed());
    this.cache.on('deleted', (n) => n.path !== membershipPath && changed());
  }

  /**
   * Joins (the member node is created in the background) and starts following the membership.
   * Resolves once the membership was first read; `waitForJoined` waits for our own node.
   */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(async () => {
      await this.node.start();
      await this.cache.start(options);
    });
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  /** Resolves once our member node was first created; TimeoutError / AbortError / ClosedError. */
  waitForJoined(options: WaitOptions = {}): Promise<void> {
    return this.node.waitForInitialCreate(options);
  }

  /** The membership as cached now: member id → payload. Always includes this member. */
  getCurrentMembers(): Membership {
    const members: Membership = new Map();
    for (const name of this.cache.children(this.membershipPath) ?? []) {
      const n = this.cache.get(joinPath(this.membershipPath, name));
      if (n) members.set(name, n.data);
    }
    if (!members.has(this.memberId)) members.set(this.memberId, this.node.getData());
    return members;
  }

  /** Our payload: written to our node now (or with its next creation). */
  setPayload(payload: NodeData | null): Promise<void> {
    return this.node.setData(payload);
  }

  /** The member id in a member node's path. */
  idFromPath(path: string): string {
    return path.slice(path.lastIndexOf('/') + 1);
  }

  /** Membership snapshots: the current one first (once loaded), then one per change, until close or `signal`. */
  snapshots(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<Membership> {
    return this.stream.subscribe(options.signal, this.last ? [this.last] : []);
  }

  [Symbol.asyncIterator](): AsyncIterator<Membership> {
    return this.snapshots();
  }

  /** Leaves the group (our node is deleted) and stops following it; every watch is removed. */
  close(): Promise<void> {
    return this.life.close(async () => {
      await this.cache.close();
      await this.node.close();
      this.stream.end();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private changed(): void {
    if (!this.cache.initialized || !this.life.isStarted) return;
    const now = this.getCurrentMembers();
    if (this.last && sameMembership(this.last, now)) return;
    this.last = now;
    this.stream.push(now);
    if (groupMembersChannel.hasSubscribers)
      groupMembersChannel.publish({
        path: this.membershipPath,
        memberId: this.memberId,
        members: [...now.keys()].sort(),
      } satisfies GroupMembersMessage);
    this.emitSafely('change', now);
  }
}

function sameMembership(a: Membership, b: Membership): boolean {
  if (a.size !== b.size) return false;
  for (const [id, payload] of a) {
    const other = b.get(id);
    if (other === undefined || !other.equals(payload)) return false;
  }
  return true;
}
