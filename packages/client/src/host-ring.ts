/** Host order and reconnect pacing. */

/** The transport's hosts in a shuffled order, tried round-robin (as ZooKeeper's client does). */
export class HostRing {
  private readonly hosts: string[];
  private index = 0;

  constructor(hosts: readonly string[], random: () => number = Math.random) {
    this.hosts = hosts.length > 0 ? [...hosts] : [''];
    for (let i = this.hosts.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [this.hosts[i], this.hosts[j]] = [this.hosts[j]!, this.hosts[i]!];
    }
  }

  get count(): number {
    return this.hosts.length;
  }

  get order(): readonly string[] {
    return this.hosts;
  }

  next(): string {
    const h = this.hosts[this.index]!;
    this.index = (this.index + 1) % this.hosts.length;
    return h;
  }

  /** The next host other than `except`, when there is one. */
  nextOther(except: string | null): string {
    for (let i = 0; i < this.hosts.length; i++) {
      const h = this.next();
      if (h !== except) return h;
    }
    return this.next();
  }
}

/** The longest pause between reconnect attempts: 1 s or a third of the session timeout, whichever is smaller. */
export function reconnectCapMs(sessionTimeoutMs: number): number {
  return Math.max(1, Math.min(1000, Math.floor(sessionTimeoutMs / 3)));
}

/**
 * The pause before reconnect attempt `failures` (0 = right after a healthy connection closed: no
 * pause). Exponential from 10 ms, capped, with jitter in the upper half so that many clients that
 * lost the same server do not return in step.
 */
export function reconnectDelayMs(failures: number, sessionTimeoutMs: number, random: () => number = Math.random): number {
  if (failures <= 0) return 0;
  const cap = reconnectCapMs(sessionTimeoutMs);
  const ceiling = Math.min(cap, 10 * 2 ** Math.min(failures - 1, 20));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
