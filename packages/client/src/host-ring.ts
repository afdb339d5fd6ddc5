/** Host order and reconnect pacing. */

/** The host list itself, with ZooKeeper's rebalancing, lives in host-provider.ts. */
export { HostProvider as HostRing } from './host-provider.js';

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
