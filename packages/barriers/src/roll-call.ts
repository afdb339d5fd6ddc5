/**
 * The roll call of a DoubleBarrier (beyond Curator): from entry to the end of leave, it tells a
 * member that left from one whose session ended while inside.
 *
 * - A Tenure member's node holds `tenure:in`; just before it deletes the node on leaving, it writes
 *   `tenure:left` (the mark). No other node is created: Curator counts the barrier's children.
 * - The roll call lists the barrier's children with a watch (again at each change, for members
 *   that come late) and reads every member node once, with a data watch.
 * - Read as `tenure:in`, its watch then says what happened first: NodeDataChanged is the mark (it
 *   is leaving); NodeDeleted with no mark is a lost member.
 * - Any other data (a Curator member's, or one already marked) is never reported. A node gone
 *   before we read it is not reported either: we cannot know.
 * - Our own disconnection makes it unsure: ZooKeeper answers a re-registered data watch on a node
 *   deleted meanwhile with NodeDeleted, marked or not. A deletion seen after we were SUSPENDED or
 *   LOST is not reported: a false "lost" would fail a barrier that went right.
 */
import { ConnectionState, NoNodeError, type Client, type WatchEvent } from '@tenure/client';
import { MemberLostError } from './errors.js';

/** A Tenure member's node data while inside. */
export const INSIDE = Buffer.from('tenure:in');
/** Written over INSIDE just before a Tenure member deletes its node on leaving. */
export const LEFT = Buffer.from('tenure:left');
/** Curator's ready node under the barrier. */
export const READY = 'ready';

interface Member {
  /** The data read (null until the read answers, or when the node was already gone). */
  data: Buffer | null;
  /** The first event of its watch. */
  event: WatchEvent['type'] | null;
  /** Our connection was lost between the read and that event. */
  unsure: boolean;
  /** Disconnections counted when the read was sent. */
  epoch: number;
}

export class RollCall {
  private readonly members = new Map<string, Member>();
  private epoch = 0;
  private stopped = false;
  private lostError: MemberLostError | null = null;
  private reportLost!: (err: MemberLostError) => void;
  /** Resolves with the first lost member's error (it never rejects). */
  readonly lost: Promise<MemberLostError> = new Promise((resolve) => (this.reportLost = resolve));

  private readonly onState = (state: ConnectionState): void => {
    if (state === ConnectionState.SUSPENDED || state === ConnectionState.LOST) this.epoch++;
  };

  private readonly onChildren = (event: WatchEvent): void => {
    if (this.stopped || event.type !== 'NodeChildrenChanged') return;
    this.list().catch((err: unknown) =>
      this.client.childLogger({ recipe: 'double-barrier', path: this.path }).debug({ err }, 'roll call: listing failed'),
    );
  };

  /**
   * @param view a tracking view of its own: stop() removes every watch set through it.
   * @param ours our member node's name, left out.
   */
  private constructor(
    private readonly view: Client,
    private readonly client: Client,
    private readonly path: string,
    private readonly ours: string,
  ) {}

  /** Starts once the caller is inside; resolves after the first listing and reads. */
  static async start(client: Client, path: string, ours: string, signal: AbortSignal): Promise<RollCall> {
    const roll = new RollCall(client.trackingWatches(), client, path, ours);
    client.on('stateChanged', roll.onState);
    try {
      await roll.list(signal);
    } catch (err) {
      await roll.stop();
      throw err;
    }
    return roll;
  }

  /** Throws the first lost member's MemberLostError. */
  check(): void {
    if (this.lostError) throw this.lostError;
  }

  /** Stops watching: removes its state listener and every watch it set. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.client.off('stateChanged', this.onState);
    await this.view.removeAllWatches();
  }

  private async list(signal?: AbortSignal): Promise<void> {
    const { children } = await this.view.getChildren(this.path, { watch: this.onChildren, signal }).catch((err: unknown) => {
      if (err instanceof NoNodeError) return { children: [] as string[] };
      throw err;
    });
    const fresh = children.filter((name) => name !== READY && name !== this.ours && !this.members.has(name));
    await Promise.all(fresh.map((name) => this.read(name, signal)));
  }

  private async read(name: string, signal?: AbortSignal): Promise<void> {
    const member: Member = { data: null, event: null, unsure: false, epoch: this.epoch };
    this.members.set(name, member);
    const watch = (event: WatchEvent): void => {
      if (member.event !== null) return;
      member.event = event.type;
      member.unsure = this.epoch !== member.epoch;
      this.judge(name, member);
    };
    try {
      member.data = (await this.view.getData(`${this.path}/${name}`, { watch, signal })).data;
    } catch (err) {
      if (err instanceof NoNodeError) return; // gone before we could read it: unknown
      throw err;
    }
    this.judge(name, member);
  }

  private judge(name: string, m: Member): void {
    if (this.stopped || this.lostError !== null) return;
    if (m.event !== 'NodeDeleted' || m.unsure || m.data === null || !m.data.equals(INSIDE)) return;
    this.lostError = new MemberLostError(this.path, name);
    this.reportLost(this.lostError);
  }
}
