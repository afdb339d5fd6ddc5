/**
 * DoubleBarrier (Curator's DistributedDoubleBarrier): `memberQty` members enter together and
 * leave together.
 *
 * Nodes: Curator's layout (the table on the class), so Curator and Tenure members share a barrier.
 *
 * enter():
 * 1. `exists(ready)` with a watch, then create our node.
 * 2. Ready was there: entered. Otherwise count the children (all of them, as Curator does); at
 *    `memberQty` or more, create ready: entered.
 * 3. Otherwise wait for the watch. A created ready is entered; any other wake reads again from 1
 *    (Curator 5.4 takes any wake as entry).
 * 4. The roll call (roll-call.ts) starts before enter resolves.
 *
 * leave(), ZooKeeper's double-barrier recipe as Curator runs it:
 * 1. A lost member (roll call): fail with MemberLostError naming it.
 * 2. List the members (children but ready), sorted. Ours is missing though we have not deleted
 *    it: our session ended inside, MemberLostError. No members left: passed.
 * 3. Ours is the only one: mark and delete it, list again.
 * 4. The lowest watches the highest; any other member watches the lowest and marks and deletes
 *    its own node (once). Unlike Curator, a member whose node is gone waits for the last one too.
 * 5. Wait for that watch (or a lost member) and go to 1. Finally delete ready.
 *
 * A failed enter or leave (timeout, abort, close, lost member) still marks and deletes our node:
 * we withdrew, and nobody waits on us.
 */
import {
  CreateMode,
  NoNodeError,
  NodeExistsError,
  SessionExpiredError,
  newProtectedId,
  type Client,
  type WaitOptions,
  type WaitScope,
  IllegalStateError,
  InvalidArgumentError,
} from '@tenure/client';
import { MemberLostError } from './errors.js';
import { HandleClose, OneShot, unless } from './handle-close.js';
import { INSIDE, LEFT, READY, RollCall } from './roll-call.js';

/**
 * A barrier that members pass together twice: `enter()` returns once `memberQty` members are
 * in, `leave()` once every member has left. `memberQty` is a threshold, not a limit.
 *
 * | Node | Mode | Data |
 * |---|---|---|
 * | `<path>` | CONTAINER | empty |
 * | `<path>/<uuid>` (one per member) | EPHEMERAL | `tenure:in`, then `tenure:left` as it leaves |
 * | `<path>/ready` | PERSISTENT | empty |
 *
 * `<path>` is created on the way to the first member node. `<uuid>` is a random UUID chosen once
 * per DoubleBarrier; `tenure:left` is written just before the node is deleted (Curator writes its
 * default data and reads none). `ready` is created by the member that completes the quorum and
 * deleted by each member at the end of its leave.
 *
 * Beyond Curator: a Tenure member that loses its session while inside makes the others' `leave()`
 * reject with {@link MemberLostError} naming it, instead of passing as if it had finished.
 */
export class DoubleBarrier implements AsyncDisposable {
  /** Our member node's name under `path` (a UUID, as Curator's). */
  readonly memberName = newProtectedId(); // a v4 UUID, in Node and browsers alike
  /** Our member node. */
  readonly memberPath: string;
  private readonly readyPath: string;
  /** The watches of enter and leave; the roll call has a view of its own. */
  private readonly watches: Client;
  private readonly life: HandleClose;
  private rollCall: RollCall | null = null;
  /** Our member node's create, while it may still land. */
  private creating: Promise<unknown> | null = null;
  /** Our node was created and we have not deleted it. */
  private nodeUp = false;
  private busy = false;

  constructor(
    private readonly client: Client,
    /** The barrier's parent node. */
    readonly path: string,
    /** How many members must enter before any passes `enter()`. */
    readonly memberQty: number,
  ) {
    if (!Number.isInteger(memberQty) || memberQty < 1)
      throw new InvalidArgumentError(`DoubleBarrier ${path}: memberQty must be an integer >= 1, got ${memberQty}`);
    this.memberPath = `${path}/${this.memberName}`;
    this.readyPath = `${path}/${READY}`;
    this.watches = client.trackingWatches();
    this.life = new HandleClose(`DoubleBarrier ${path}`);
  }

  /** True between a passed `enter()` and the end of `leave()`. */
  get inside(): boolean {
    return this.rollCall !== null;
  }

  /**
   * Enters and resolves once `memberQty` members have entered. Rejects with TimeoutError,
   * AbortError or ClosedError (our node is then withdrawn); never resolves before the quorum.
   */
  async enter(options?: WaitOptions): Promise<void> {
    if (this.inside || this.busy)
      throw new IllegalStateError(`DoubleBarrier ${this.path}: already ${this.inside ? 'inside' : 'entering or leaving'}`);
    this.busy = true;
    try {
      using scope = this.client.waitScope(this.life.join(options), `enter ${this.path}`);
      try {
        await this.waitForQuorum(scope);
        this.rollCall = await RollCall.start(this.client, this.path, this.memberName, scope.signal);
      } catch (err) {
        await this.withdraw().catch(() => {});
        throw err;
      }
    } finally {
      this.busy = false;
    }
  }

  /**
   * Leaves and resolves once every member has left. Rejects with MemberLostError when a member's
   * session ended inside (ours included), TimeoutError, AbortError or ClosedError. Either way our
   * node is gone afterwards.
   */
  async leave(options?: WaitOptions): Promise<void> {
    const roll = this.rollCall;
    if (roll === null || this.busy)
      throw new IllegalStateError(`DoubleBarrier ${this.path}: leave() ${roll === null ? 'before enter()' : 'while leaving'}`);
    this.busy = true;
    try {
      using scope = this.client.waitScope(this.life.join(options), `leave ${this.path}`);
      await this.waitForAllGone(roll, scope);
    } finally {
      this.rollCall = null;
      await roll.stop();
      await this.withdraw().catch(() => {});
      await this.client.delete(this.readyPath).catch(() => {});
      this.busy = false;
    }
  }

  /** Ends pending waits with ClosedError, withdraws our node and removes every watch. */
  async close(): Promise<void> {
    this.life.close();
    const roll = this.rollCall;
    this.rollCall = null;
    await roll?.stop();
    if (!this.client.closed) await this.withdraw().catch(() => {});
    await this.watches.removeAllWatches();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async waitForQuorum(scope: WaitScope): Promise<void> {
    let ready = new OneShot();
    try {
      let readyStat = await scope.race(this.watches.exists(this.readyPath, { watch: ready.watch, signal: scope.signal }));
      await scope.race(this.createOurs());
      while (readyStat === null) {
        const { children } = await scope.race(this.client.getChildren(this.path, { signal: scope.signal }));
        if (children.length >= this.memberQty) {
          // Any answer that the node exists will do, ours or another member's: Curator's raw retry.
          await scope.race(this.client.create(this.readyPath, null, { retryAmbiguousWrites: 'raw' }).catch(unless(NodeExistsError)));
          return;
        }
        if ((await scope.race(ready.fired)).type === 'NodeCreated') return;
        ready = new OneShot();
        readyStat = await scope.race(this.watches.exists(this.readyPath, { watch: ready.watch, signal: scope.signal }));
      }
    } finally {
      ready.drop(this.watches, this.readyPath);
    }
  }

  private async waitForAllGone(roll: RollCall, scope: WaitScope): Promise<void> {
    for (;;) {
      scope.check();
      roll.check();
      const { children } = await scope.race(this.client.getChildren(this.path, { signal: scope.signal }).catch(noChildren));
      const members = children.filter((c) => c !== READY).sort();
      const ourIndex = members.indexOf(this.memberName);
      if (ourIndex < 0 && this.nodeUp) {
        this.nodeUp = false;
        throw new MemberLostError(this.path, this.memberName, true);
      }
      if (members.length === 0) return;
      if (ourIndex === 0 && members.length === 1) {
        await scope.race(this.withdraw());
        continue;
      }
      const watched = `${this.path}/${ourIndex === 0 ? members[members.length - 1] : members[0]}`;
      const change = new OneShot();
      try {
        const stat = await scope.race(this.watches.exists(watched, { watch: change.watch, signal: scope.signal }));
        if (ourIndex !== 0) await scope.race(this.withdraw());
        if (stat !== null) await scope.race(Promise.race([change.fired, roll.lost]));
      } finally {
        change.drop(this.watches, watched);
      }
    }
  }

  /** Creates our member node; a create that was retried and landed twice is ours all the same. */
  private createOurs(): Promise<unknown> {
    const creating = this.client.create(this.memberPath, INSIDE, { mode: CreateMode.EPHEMERAL, createParentContainers: true }).then(
      () => {
        this.nodeUp = true;
      },
      async (err: unknown) => {
        if (!(err instanceof NodeExistsError)) throw err;
        const stat = await this.client.exists(this.memberPath);
        if (stat?.ephemeralOwner !== this.client.sessionId) throw err;
        this.nodeUp = true;
      },
    );
    this.creating = creating;
    return creating;
  }

  /** Marks our node as left, then deletes it (guaranteed). Nothing to do if it is not up. */
  private async withdraw(): Promise<void> {
    await this.creating?.catch(() => {});
    this.creating = null;
    if (!this.nodeUp) return;
    this.nodeUp = false;
    try {
      await this.client.setData(this.memberPath, LEFT);
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof SessionExpiredError) return; // it went with our session
      // Not marked, but deleting beats holding everybody up: at worst we are reported lost.
    }
    await this.client.delete(this.memberPath, { guaranteed: true }).catch(unless(NoNodeError));
  }
}

const noChildren = (err: unknown): { children: string[] } => {
  if (err instanceof NoNodeError) return { children: [] };
  throw err;
};
