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
 * Membership is the children of `membershipPath`, mirrored one level deep (one persistent
 * recursive watch, or one-shot watches on ZooKeeper 3.5) by one mirror per client and path, shared
 * by this process's members on that client (membership-mirror.ts): each entry is a payload and a
 * czxid, a burst of events costs one read pass per round trip, and each change makes one snapshot,
 * shared read-only by those members. As in Curator, this member is always in its own view, with
 * its payload, even before its node exists.
 */
import { EventEmitter } from 'eventemitter3';
import {
  RecipeLifecycle,
  safeEmitter,
  type Client,
  type NodeData,
  type RecipeState,
  type SafeEmit,
  type Logger,
  type WaitOptions,
  InvalidArgumentError,
} from '@tenure/client';
import { EventStream, type TreeCacheOptions } from '@tenure/cache';
import { PersistentNode, type PersistentNodeEvents, type PersistentNodeOptions } from '@tenure/nodes';
import { joinPath, validatePath } from '@tenure/protocol';
import { groupMembersChannel, type GroupMembersMessage } from './diagnostics.js';
import { MembershipMirror, type MirrorUser } from './membership-mirror.js';
import { SharedMembership, sameMembership } from './shared-membership.js';

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
  /** The membership changed (ids, payloads, or a member that left and came back); a new snapshot, shared read-only. */
  change: (members: Membership) => void;
}

export class GroupMember extends EventEmitter<GroupMemberEvents> implements AsyncIterable<Membership> {
  readonly membershipPath: string;
  readonly memberId: string;
  private readonly node: PersistentNode;
  private readonly client: Client;
  private readonly persistentWatches: boolean | undefined;
  private readonly mirrorLogger: Logger;
  /** The shared mirror, from start() until close(). */
  private mirror: MembershipMirror | null = null;
  private readonly user: MirrorUser = {
    membership: (snapshot) => this.changed(snapshot),
    error: (err) => this.emitSafely('error', err),
  };
  private readonly stream = new EventStream<Membership>();
  /** The view last emitted, and the mirror's snapshot it was made of (the same object when it holds this member). */
  private last: Membership | null = null;
  private lastBase: SharedMembership | null = null;
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
    this.client = client;
    this.persistentWatches = persistentWatches;
    this.mirrorLogger = options.logger ?? client.childLogger({ recipe: 'groupMember', path: membershipPath });
    this.node.on('conflict', (e) => this.emitSafely('conflict', e));
    this.node.on('error', (e) => this.emitSafely('error', e));
  }

  /**
   * Joins (the member node is created in the background) and starts following the membership.
   * Resolves once the membership was first read; `waitForJoined` waits for our own node.
   */
  start(options: WaitOptions = {}): Promise<void> {
    return this.life.start(async () => {
      // Acquired before the first await, so that a close() meanwhile releases it.
      const mirror = (this.mirror = MembershipMirror.acquire(
        this.client,
        this.membershipPath,
        this.persistentWatches,
        this.mirrorLogger,
        this.user,
      ));
      await this.node.start();
      await mirror.started(options); // rejects once closed meanwhile
      this.changed(mirror.snapshot());
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

  /** The membership as cached now: member id → payload, a copy of one's own. Always includes this member. */
  getCurrentMembers(): Membership {
    const members: Membership = new Map(this.mirror?.initialized ? this.mirror.snapshot() : []);
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

  /** Membership snapshots (shared and read-only; copy one to change it): the current one first (once loaded), then one per change, until close or `signal`. */
  snapshots(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<Membership> {
    return this.stream.subscribe(options.signal, this.last ? [this.last] : []);
  }

  [Symbol.asyncIterator](): AsyncIterator<Membership> {
    return this.snapshots();
  }

  /** Leaves the group (our node is deleted) and stops following it; every watch is removed. */
  close(): Promise<void> {
    return this.life.close(async () => {
      const mirror = this.mirror;
      this.mirror = null;
      if (mirror) await mirror.release(this.user);
      await this.node.close();
      this.stream.end();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * A new snapshot of the mirror. Consecutive snapshots of the mirror always differ (ids or
   * payload bytes; a member that left and came back is shown leaving first), so a view that is the
   * mirror's own is emitted as is; a view with this member added (its node not read yet) is compared.
   */
  private changed(snapshot: SharedMembership): void {
    if (!this.life.isStarted || !this.mirror?.initialized) return;
    const shared = snapshot.has(this.memberId);
    if (snapshot === this.lastBase && shared) return;
    const now = shared ? snapshot : SharedMembership.of([...snapshot, [this.memberId, this.node.getData()]]);
    const last = this.last;
    if (last && !(shared && last === this.lastBase) && sameMembership(last, now)) return;
    this.last = now;
    this.lastBase = snapshot;
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
