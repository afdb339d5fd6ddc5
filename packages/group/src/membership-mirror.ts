/**
 * One mirror of a group's membership per (client, membership path, watch mode), shared by every
 * GroupMember of this process on that client: n members of one process hold n entries (not n²)
 * and read each change once between them.
 *
 * An entry is only what membership needs: the member's payload and its node's czxid (the node's
 * identity: a member that left and came back has a new node, so a new czxid, even when its id and
 * payload are the same). No Stat and no per-node read state is kept.
 *
 * Protocol (depth 1 below `path`; it creates no nodes):
 * 1. Watch. Where the server has persistent watches (ZooKeeper 3.6+, the embedded server), one
 *    `addWatch(path, recursive)`: its events name the member node that was created, changed or
 *    deleted; deeper events are ignored; its `reset` (events may have been missed) re-lists.
 *    A server that answers UNIMPLEMENTED (3.5), or `persistentWatches: false`, selects one-shot
 *    watches: getChildren on `path` (exists while it is missing) and getData on each member.
 * 2. Passes, one at a time (the kit's PassRunner). Events only mark work: a name to read, or the
 *    group to list. The first mark of a quiet spell arms one zero-delay timeout (setTimeout, not
 *    setImmediate: the package runs in browsers); in a burst (a snapshot published less than
 *    100 ms ago) it waits out those 100 ms, and marks made while a pass is in flight arm it once
 *    that pass ends. So a burst costs at most one pass per 100 ms (one in all when its events
 *    arrive together), and a pass costs one getChildren (when listing is due) plus reads of the
 *    names that need them, batched in multiRead requests (one getData each, pipelined, in one-shot mode: multiRead sets no
 *    watches). A listing reads only names not yet mirrored (or deleted since), except after a reset
 *    or a new session, when every name is read again. A deletion costs no read: the persistent
 *    watch's events come in order, and in one-shot mode the listing says whether the name is back.
 * 3. Each pass ends with one new snapshot (sorted by id), built once and handed to every member,
 *    when an id came or went, a payload's bytes changed, or a node was replaced (its czxid changed:
 *    a member that left and came back within the pass). A replaced member's leave is published
 *    first, in a snapshot without it: a burst may fold many changes into two snapshots, but a
 *    leave and a return never into none.
 * 4. A failed pass puts its work back and is retried with the retry policy's backoff; NoAuth is
 *    reported, not retried. After a new session (LOST then RECONNECTED) one-shot watches re-list.
 * 5. The last member's release removes every watch the mirror set, on the server too.
 */
import {
  ClosedError,
  ConnectionState,
  DecompressionError,
  ErrorCode,
  KeeperError,
  NoNodeError,
  PassRunner,
  RetryPacer,
  triageFailure,
  type Client,
  type Logger,
  type PersistentWatch,
  type PersistentWatchEvent,
  type TimerHandle,
  type WaitOptions,
  type WatchEvent,
  type WatchOptions,
} from '@tenure/client';
import { joinPath } from '@tenure/protocol';
import { SharedMembership } from './shared-membership.js';

const EMPTY = SharedMembership.of([]);
/** getData ops per multiRead: a request and its reply stay far below jute.maxbuffer (1 MB) with small payloads. */
const READS_PER_REQUEST = 256;
/**
 * During a burst (a change published less than this ago), passes start at most this often: a mass
 * rejoin spread over a second of jitter costs ~10 passes and ~10 snapshots, not one per member. The
 * first change after a quiet spell is read at once.
 */
const BURST_PASS_GAP_MS = 100;

export interface MirrorUser {
  /** A new snapshot (only once the first load is done). */
  membership(snapshot: SharedMembership): void;
  error(err: Error): void;
}

/** What one pass read of a member: its payload and node identity, or `null` (no such node). */
type Read = { data: Buffer; czxid: bigint } | null;

export class MembershipMirror {
  /** Our view of the client: every watch we set goes through it, and release takes them all back. */
  private readonly client: Client;
  private readonly users = new Set<MirrorUser>();
  /** Each mirrored member's node identity; the ids of `current` once a pass has applied. */
  private readonly czxids = new Map<string, bigint>();
  private current: SharedMembership = EMPTY;
  private loaded = false;
  private readonly whenLoaded: Promise<void>;
  private endLoad!: (err?: Error) => void;
  private starting = false;
  private released = false;
  private sessionLost = false;
  private mode: 'persistent' | 'one-shot';
  private watch: PersistentWatch | null = null;
  private readonly oneShot: WatchOptions;
  // ---- work marked by events, taken by the next pass ----
  /** Names an event touched: true to read, false deleted (its last event was NodeDeleted). */
  private readonly marked = new Map<string, boolean>();
  private listDue = true;
  private readAllDue = true;
  private kickTimer: TimerHandle | undefined = undefined;
  /** When the last snapshot was published (the client's clock): a burst's passes are spaced from it. */
  private lastPublished = -Infinity;
  /** Work was marked while a pass was in flight: kick once it ends. */
  private kickAfterPass = false;
  private readonly runner: PassRunner;
  private readonly pacer: RetryPacer;
  private readonly childPrefix: string;

  private constructor(
    client: Client,
    private readonly path: string,
    persistentWatches: boolean | undefined,
    private readonly log: Logger,
    private readonly forget: () => void,
  ) {
    this.client = client.trackingWatches();
    this.mode = persistentWatches === false ? 'one-shot' : 'persistent';
    this.oneShot = { watch: this.onOneShot };
    this.childPrefix = path === '/' ? '/' : `${path}/`;
    this.pacer = new RetryPacer(client);
    this.runner = new PassRunner(
      this.client.clock,
      () => this.pass(),
      (err) => this.failed(err),
    );
    this.whenLoaded = new Promise((resolve, reject) => (this.endLoad = (err) => (err ? reject(err) : resolve())));
    this.whenLoaded.catch(() => {}); // waiting for it is optional
  }

  private static readonly byClient = new WeakMap<Client, Map<string, MembershipMirror>>();

  /** The mirror of `path` on `client` (made on first use); `release(user)` when done. */
  static acquire(client: Client, path: string, persistentWatches: boolean | undefined, logger: Logger, user: MirrorUser): MembershipMirror {
    let mine = MembershipMirror.byClient.get(client);
    if (!mine) MembershipMirror.byClient.set(client, (mine = new Map<string, MembershipMirror>()));
    const key = `${persistentWatches === false ? 'one-shot' : 'persistent'}\0${path}`;
    let mirror = mine.get(key);
    if (!mirror) {
      const registry = mine;
      const made: MembershipMirror = new MembershipMirror(client, path, persistentWatches, logger, () => {
        if (registry.get(key) === made) registry.delete(key);
      });
      mine.set(key, (mirror = made));
    }
    mirror.users.add(user);
    return mirror;
  }

  /**
   * Starts the mirror on first use, then waits (with this user's own deadline) for its first load;
   * the mirror keeps loading for the others if one user's wait ends early.
   */
  started(options: WaitOptions): Promise<void> {
    if (this.released) return Promise.reject(new ClosedError(`GroupMember mirror of ${this.path}`));
    if (!this.starting) {
      this.starting = true;
      this.client.on('stateChanged', this.onState);
      this.client.closedSignal.addEventListener('abort', this.onClientClosed, { once: true });
      this.runner.run();
    }
    if (this.loaded) return Promise.resolve();
    return this.client.wait(this.whenLoaded, options, `GroupMember ${this.path}: initial load`);
  }

  get initialized(): boolean {
    return this.loaded;
  }

  /** The current snapshot (empty before the first load). */
  snapshot(): SharedMembership {
    return this.current;
  }

  /** `user` is done; the last user's release stops the passes and removes every watch. */
  async release(user: MirrorUser): Promise<void> {
    this.users.delete(user);
    if (this.users.size > 0 || this.released) return;
    this.released = true;
    this.forget();
    this.client.off('stateChanged', this.onState);
    this.client.closedSignal.removeEventListener('abort', this.onClientClosed);
    if (this.kickTimer !== undefined) this.client.clock.clearTimeout(this.kickTimer);
    this.kickTimer = undefined;
    this.runner.stop();
    this.pacer.cancel();
    this.endLoad(new ClosedError(`GroupMember mirror of ${this.path}`));
    // A pass in flight finishes first, so that the watches it sets are removed too.
    await this.runner.whenIdle();
    if (this.starting) await this.client.removeAllWatches();
    this.watch = null;
    this.czxids.clear();
    this.current = EMPTY;
  }

  // ---- events: they mark work, a pass does it ----

  private readonly onPersistent = (event: PersistentWatchEvent): void => {
    if (this.released) return;
    if (event.type === 'reset') return this.due(true);
    if (event.path === this.path) {
      if (event.type === 'NodeCreated' || event.type === 'NodeDeleted') this.due(false);
      return;
    }
    if (!event.path.startsWith(this.childPrefix)) return;
    const name = event.path.slice(this.childPrefix.length);
    if (name.includes('/')) return; // below a member node: not membership
    if (event.type === 'NodeCreated' || event.type === 'NodeDataChanged') this.mark(name, true);
    else if (event.type === 'NodeDeleted') this.mark(name, false);
  };

  private readonly onOneShot = (event: WatchEvent): void => {
    if (this.released) return;
    if (event.path === this.path) return this.due(false); // children changed, the group node created or deleted
    const name = event.path.slice(this.childPrefix.length);
    if (event.type === 'NodeDataChanged') this.mark(name, true);
    else if (event.type === 'NodeDeleted') {
      // Its return (a new node) shows only in a listing: the child watch may be spent already.
      this.mark(name, false);
      this.listDue = true;
    }
  };

  private readonly onState = (state: ConnectionState): void => {
    if (this.released) return;
    if (state === ConnectionState.LOST) this.sessionLost = true;
    else if (state === ConnectionState.RECONNECTED && this.sessionLost) {
      this.sessionLost = false;
      // A persistent watch says so itself (reset); one-shot watches may have missed more than
      // SetWatches covers on a new session.
      if (this.mode === 'one-shot') this.due(true);
    }
  };

  private readonly onClientClosed = (): void => this.pacer.cancel();

  /** The group is to be listed again (`readAll`: and every member read again). */
  private due(readAll: boolean): void {
    this.listDue = true;
    this.readAllDue ||= readAll;
    this.kick();
  }

  private mark(name: string, read: boolean): void {
    this.marked.set(name, read);
    this.kick();
  }

  /**
   * One pass soon: after this turn (a socket read delivers many events at once) or, in a burst,
   * `BURST_PASS_GAP_MS` after the last snapshot; or after the one in flight.
   */
  private kick(): void {
    if (this.kickTimer !== undefined || !this.starting) return;
    const clock = this.client.clock;
    const wait = Math.max(0, this.lastPublished + BURST_PASS_GAP_MS - clock.now());
    this.kickTimer = clock.setTimeout(() => {
      this.kickTimer = undefined;
      if (this.released) return;
      if (this.runner.busy) this.kickAfterPass = true;
      else this.runner.run();
    }, wait);
  }

  // ---- passes ----

  private async pass(): Promise<void> {
    try {
      await this.passOnce();
    } finally {
      if (this.kickAfterPass && !this.released) {
        this.kickAfterPass = false;
        this.kick();
      }
    }
  }

  private async passOnce(): Promise<void> {
    if (this.released) return;
    if (this.mode === 'persistent' && this.watch === null) await this.arm();
    if (this.released) return;
    // Take the work marked so far; what is marked from here on is the next pass's.
    const marked = new Map(this.marked);
    this.marked.clear();
    const list = this.listDue;
    const readAll = this.readAllDue;
    this.listDue = this.readAllDue = false;
    try {
      const names = new Set<string>();
      const gone = new Set<string>();
      for (const [name, read] of marked) (read ? names : gone).add(name);
      let listed: Set<string> | null = null;
      if (list) {
        listed = new Set(await this.list());
        for (const name of listed) if (readAll || !this.czxids.has(name) || gone.has(name)) names.add(name);
      }
      const reads = await this.read([...names]);
      if (this.released) return;
      // A deleted name not read again (not listed, or no listing: the persistent watch's events
      // come in order) is gone without a read.
      for (const name of gone) if (!reads.has(name)) reads.set(name, null);
      this.apply(listed, reads);
      this.pacer.succeeded();
    } catch (err) {
      for (const [name, read] of marked) if (!this.marked.has(name)) this.marked.set(name, read);
      this.listDue ||= list;
      this.readAllDue ||= readAll;
      throw err;
    }
  }

  /** One persistent recursive watch on the group, or one-shot watches where the server has none. */
  private async arm(): Promise<void> {
    try {
      this.watch = await this.client.addWatch(this.path, { recursive: true, listener: this.onPersistent });
    } catch (err) {
      if (!(err instanceof KeeperError && err.keeperCode === ErrorCode.UNIMPLEMENTED)) throw err;
      this.mode = 'one-shot'; // a 3.5 server
      this.listDue = this.readAllDue = true;
    }
  }

  /** The group's children now (none while the group node is missing). */
  private async list(): Promise<string[]> {
    const watch = this.mode === 'one-shot' ? this.oneShot : undefined;
    try {
      return (await this.client.getChildren(this.path, watch)).children;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      // Missing: the persistent watch sees its creation; one-shot needs an exists watch.
      if (watch && (await this.client.exists(this.path, watch)) !== null) this.due(false);
      return [];
    }
  }

  /** Each name's read; `undefined` where the payload did not decompress (reported). */
  private async read(names: readonly string[]): Promise<Map<string, Read | undefined>> {
    const got = new Map<string, Read | undefined>();
    if (this.mode === 'one-shot') {
      await Promise.all(names.map(async (name) => got.set(name, await this.readOne(name, this.oneShot))));
      return got;
    }
    const batches: Promise<void>[] = [];
    for (let i = 0; i < names.length; i += READS_PER_REQUEST) batches.push(this.readBatch(names.slice(i, i + READS_PER_REQUEST), got));
    await Promise.all(batches);
    return got;
  }

  private async readBatch(names: readonly string[], into: Map<string, Read | undefined>): Promise<void> {
    let results;
    try {
      results = await this.client.multiRead(names.map((name) => ({ type: 'getData', path: joinPath(this.path, name) }) as const));
    } catch (err) {
      if (!(err instanceof DecompressionError)) throw err;
      // One payload that does not decompress: read those names one by one, to skip only it.
      for (const name of names) into.set(name, await this.readOne(name, undefined));
      return;
    }
    results.forEach((r, i) => {
      const name = names[i]!;
      if (r.type === 'getData') into.set(name, { data: r.data, czxid: r.stat.czxid });
      else if (r.type === 'error' && r.error.keeperCode === ErrorCode.NONODE) into.set(name, null);
      else if (r.type === 'error') throw r.error;
    });
  }

  private async readOne(name: string, watch: WatchOptions | undefined): Promise<Read | undefined> {
    try {
      const { data, stat } = await this.client.getData(joinPath(this.path, name), watch);
      return { data, czxid: stat.czxid };
    } catch (err) {
      if (err instanceof NoNodeError) return null;
      if (!(err instanceof DecompressionError)) throw err;
      // Reading again gives the same bytes: reported, and read again when the node changes.
      this.report(err);
      return undefined;
    }
  }

  /** Applies a pass's listing and reads; publishes one snapshot if anything differs. */
  private apply(listed: Set<string> | null, reads: Map<string, Read | undefined>): void {
    let changed = false;
    const replaced: string[] = [];
    const payloads = new Map<string, Buffer>();
    if (listed) {
      for (const name of [...this.czxids.keys()]) {
        if (!listed.has(name) && !reads.has(name)) changed = this.czxids.delete(name) || changed;
      }
    }
    for (const [name, read] of reads) {
      if (read === undefined) continue; // unreadable payload: kept as it was
      const had = this.czxids.get(name);
      if (read === null) {
        if (had !== undefined) {
          this.czxids.delete(name);
          changed = true;
        }
        continue;
      }
      if (had === undefined) changed = true;
      else if (had !== read.czxid) {
        changed = true;
        replaced.push(name);
      } else if (!read.data.equals(this.current.get(name)!)) changed = true;
      else continue; // the same node, the same bytes: keep the Buffer we have
      this.czxids.set(name, read.czxid);
      payloads.set(name, read.data);
    }
    const first = !this.loaded;
    if (!changed && !first) return;
    const entries = [...this.czxids.keys()].sort().map((id) => [id, payloads.get(id) ?? this.current.get(id)!] as const);
    if (replaced.length > 0 && !first) {
      // Members that left and came back within this pass: their leave is shown first, so that
      // no member misses it (their ids would otherwise look unchanged).
      const returned = new Set(replaced);
      this.publish(entries.filter(([id]) => !returned.has(id)));
    }
    this.publish(entries);
    if (first) {
      this.loaded = true;
      this.endLoad();
      for (const u of [...this.users]) u.membership(this.current);
    }
  }

  /** A new snapshot, handed to every member (once loaded). */
  private publish(entries: Iterable<readonly [string, Buffer]>): void {
    this.current = SharedMembership.of(entries);
    this.lastPublished = this.client.clock.now();
    if (this.loaded) for (const u of [...this.users]) u.membership(this.current);
  }

  private failed(err: unknown): void {
    if (this.released) return;
    const verdict = triageFailure(err, this.client.closedSignal);
    if (verdict === 'closed') return;
    if (verdict === 'stop') {
      this.log.warn({ err }, 'NoAuth reading the group: not retried');
      this.report(err as Error);
      return;
    }
    if (verdict === 'report' && err instanceof Error) this.report(err);
    const ms = this.pacer.schedule(() => {
      if (!this.released) this.runner.run();
    });
    this.log.debug({ err, retryInMs: ms }, 'group read failed: retrying');
  }

  private report(err: Error): void {
    for (const u of [...this.users]) u.error(err);
  }
}
