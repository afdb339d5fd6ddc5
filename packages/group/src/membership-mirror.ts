/**
 * One mirror of a group's membership per (client, membership path, watch mode), shared by every
 * GroupMember of this process on that client: one TreeCache of depth 1, so n members of one
 * process hold n entries and make one read per change between them, not n of each.
 *
 * The cache's events are coalesced: every event of one turn of the event loop (one socket read
 * delivers many notifications, and their reads resolve together) marks the mirror dirty, and one
 * `setImmediate` later one snapshot is built (O(n)) and handed to every member. A snapshot equal to
 * the last (same ids, same payload bytes) is not handed on.
 */
import { IllegalStateError, type Client, type Logger, type WaitOptions } from '@tenure/client';
import { TreeCache } from '@tenure/cache';
import { joinPath } from '@tenure/protocol';

/**
 * A membership snapshot shared by this process's members: read-only (as Curator's ImmutableMap);
 * `new Map(snapshot)` gives a copy to change.
 */
export class SharedMembership extends Map<string, Buffer> {
  static of(entries: Iterable<readonly [string, Buffer]>): SharedMembership {
    const m = new SharedMembership();
    for (const [k, v] of entries) Map.prototype.set.call(m, k, v);
    return m;
  }

  override set(): this {
    throw new IllegalStateError('GroupMember: a membership snapshot is shared and read-only; copy it (new Map(members)) to change it');
  }

  override delete(): boolean {
    throw new IllegalStateError('GroupMember: a membership snapshot is shared and read-only; copy it (new Map(members)) to change it');
  }

  override clear(): void {
    throw new IllegalStateError('GroupMember: a membership snapshot is shared and read-only; copy it (new Map(members)) to change it');
  }
}

const EMPTY = SharedMembership.of([]);

export interface MirrorUser {
  /** A new snapshot (only once the first load is done). */
  membership(snapshot: SharedMembership): void;
  error(err: Error): void;
}

export class MembershipMirror {
  readonly cache: TreeCache;
  private readonly users = new Set<MirrorUser>();
  private current: SharedMembership = EMPTY;
  private dirty = false;
  private pending: ReturnType<typeof setImmediate> | null = null;
  private released = false;
  private starting: Promise<void> | null = null;

  private constructor(
    client: Client,
    private readonly path: string,
    persistentWatches: boolean | undefined,
    logger: Logger | undefined,
    private readonly forget: () => void,
  ) {
    this.cache = new TreeCache(client, path, { maxDepth: 1, persistentWatches, logger });
    const changed = (): void => this.markDirty();
    this.cache.on('initialized', changed);
    this.cache.on('created', changed);
    this.cache.on('changed', changed);
    this.cache.on('deleted', changed);
    this.cache.on('error', (err) => {
      for (const u of [...this.users]) u.error(err);
    });
  }

  private static readonly byClient = new WeakMap<Client, Map<string, MembershipMirror>>();

  /** The mirror of `path` on `client` (made on first use); `release(user)` when done. */
  static acquire(
    client: Client,
    path: string,
    persistentWatches: boolean | undefined,
    logger: Logger | undefined,
    user: MirrorUser,
  ): MembershipMirror {
    let mine = MembershipMirror.byClient.get(client);
    if (!mine) MembershipMirror.byClient.set(client, (mine = new Map<string, MembershipMirror>()));
    const key = `${String(persistentWatches ?? 'default')}\0${path}`;
    let mirror = mine.get(key);
    if (!mirror) {
      const registry = mine;
      mirror = new MembershipMirror(client, path, persistentWatches, logger, () => registry.delete(key));
      mine.set(key, mirror);
    }
    mirror.users.add(user);
    return mirror;
  }

  /**
   * Starts the cache on first use, then waits (with this user's own deadline) for its first load;
   * the cache keeps loading for the others if one user's wait ends early.
   */
  started(options: WaitOptions): Promise<void> {
    if (!this.starting) {
      this.starting = this.cache.start();
      this.starting.catch(() => {}); // each user sees it below
    }
    return Promise.race([this.starting, this.cache.waitForInitialized(options)]);
  }

  get initialized(): boolean {
    return this.cache.initialized;
  }

  /** The current snapshot (EMPTY before the first load). */
  snapshot(): SharedMembership {
    if (this.dirty) this.rebuild();
    return this.current;
  }

  /** The cached payload of one member, without a snapshot. */
  payloadOf(memberId: string): Buffer | undefined {
    return this.cache.get(joinPath(this.path, memberId))?.data;
  }

  /** `user` is done; the last user's release closes the cache (its watches go). */
  async release(user: MirrorUser): Promise<void> {
    this.users.delete(user);
    if (this.users.size > 0 || this.released) return;
    this.released = true;
    this.forget();
    if (this.pending) clearImmediate(this.pending);
    this.pending = null;
    await this.cache.close();
  }

  private markDirty(): void {
    this.dirty = true;
    if (this.pending || this.released) return;
    this.pending = setImmediate(() => {
      this.pending = null;
      this.flush();
    });
  }

  private flush(): void {
    if (!this.cache.initialized || this.released) return;
    if (!this.dirty) return;
    const before = this.current;
    this.rebuild();
    if (this.current === before) return;
    for (const u of [...this.users]) u.membership(this.current);
  }

  /** One snapshot from the cache, sorted by id; the old one is kept when nothing differs. */
  private rebuild(): void {
    this.dirty = false;
    if (!this.cache.initialized) return;
    const next = SharedMembership.of(this.members());
    if (!sameMembership(this.current, next)) this.current = next;
  }

  private *members(): Generator<[string, Buffer]> {
    for (const name of this.cache.children(this.path) ?? []) {
      const n = this.cache.get(joinPath(this.path, name));
      if (n) yield [name, n.data];
    }
  }
}

export function sameMembership(a: ReadonlyMap<string, Buffer>, b: ReadonlyMap<string, Buffer>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, payload] of a) {
    const other = b.get(id);
    if (other === undefined || (other !== payload && !other.equals(payload))) return false;
  }
  return true;
}
