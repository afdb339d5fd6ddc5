/**
 * The hosts a session connects to: a shuffled list tried round-robin, as ZooKeeper's
 * StaticHostProvider does, and the list's replacement (`update`) with that provider's
 * probabilistic rebalancing, so that when servers are added or removed the sessions spread evenly
 * over the new list without every client moving.
 *
 * The rebalancing rule (StaticHostProvider.updateServerList, ZooKeeper 3.5+), with the old list of
 * size S, the new list split into `old` (also in the old list) and `fresh` (new to it):
 * - the list grew and my server stays: move, to a fresh server, with probability 1 - S/(old+fresh);
 * - the list grew and my server left: move, to a fresh server first;
 * - the list shrank (or kept its size) and my server stays: stay;
 * - it shrank and my server left: move, to an old server with probability
 *   pOld = old·(S - (old+fresh)) / ((old+fresh)·(S - old)), else to a fresh one.
 * While moving ("reconfig mode"), `next()` draws fresh or old servers by those probabilities, each
 * at most once, then falls back to plain round-robin.
 */

export class HostProvider {
  private hosts: string[];
  private index = -1;
  private reconfigMode = false;
  private oldServers: string[] = [];
  private newServers: string[] = [];
  private nextOld = 0;
  private nextNew = 0;
  private pOld = 0;
  private pNew = 0;

  constructor(
    hosts: readonly string[],
    private readonly random: () => number = Math.random,
  ) {
    this.hosts = shuffle(hosts.length > 0 ? hosts : [''], random);
  }

  get count(): number {
    return this.hosts.length;
  }

  /** The hosts in the order they are tried. */
  get order(): readonly string[] {
    return this.hosts;
  }

  /** Whether the last `update` asked the session to move and `next()` is still drawing the move's target. */
  get moving(): boolean {
    return this.reconfigMode;
  }

  next(): string {
    if (this.reconfigMode) {
      const h = this.nextInReconfigMode();
      if (h !== undefined) {
        this.index = this.hosts.indexOf(h);
        return h;
      }
      this.reconfigMode = false; // every candidate was tried: back to round-robin
    }
    this.index = (this.index + 1) % this.hosts.length;
    return this.hosts[this.index]!;
  }

  /** The next host other than `except`, when there is one. */
  nextOther(except: string | null): string {
    for (let i = 0; i < this.hosts.length; i++) {
      const h = this.next();
      if (h !== except) return h;
    }
    return this.next();
  }

  /**
   * Replaces the list. `current` is the server of the live connection (null when there is none).
   * Returns true when the session should move: close its connection and connect to `next()`.
   */
  update(hosts: readonly string[], current: string | null): boolean {
    const previous = this.hosts;
    const shuffled = shuffle(hosts, this.random);
    if (shuffled.length === 0) return false;
    // Not connected: the server last tried stands for "mine", as in ZooKeeper.
    const mine = current ?? previous[Math.max(0, this.index)] ?? '';
    const mineStays = shuffled.includes(mine);
    const before = new Set(previous);
    this.oldServers = shuffled.filter((h) => before.has(h));
    this.newServers = shuffled.filter((h) => !before.has(h));
    this.nextOld = 0;
    this.nextNew = 0;
    const numOld = this.oldServers.length;
    const total = shuffled.length;
    const size = previous.length;
    let move: boolean;
    if (total > size) {
      if (mineStays) {
        move = this.random() <= 1 - size / total;
        if (move) [this.pNew, this.pOld] = [1, 0];
      } else {
        move = true;
        [this.pNew, this.pOld] = [1, 0];
      }
    } else if (mineStays) {
      move = false;
    } else {
      move = true;
      const pOld = size === numOld ? 1 : (numOld * (size - total)) / (total * (size - numOld));
      this.pOld = Number.isFinite(pOld) ? Math.min(1, Math.max(0, pOld)) : 0;
      this.pNew = 1 - this.pOld;
    }
    this.hosts = shuffled;
    this.reconfigMode = move;
    // Staying: round-robin goes on from my server's place in the new order.
    this.index = move ? -1 : Math.max(-1, shuffled.indexOf(mine));
    return move;
  }

  private nextInReconfigMode(): string | undefined {
    const takeNew = this.random() <= this.pNew;
    if (this.nextNew < this.newServers.length && (takeNew || this.nextOld >= this.oldServers.length)) {
      return this.newServers[this.nextNew++];
    }
    if (this.nextOld < this.oldServers.length) return this.oldServers[this.nextOld++];
    return undefined;
  }
}

function shuffle(list: readonly string[], random: () => number): string[] {
  const out = [...new Set(list)];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
