/** An election with two latches (the second also follows `leaders()`: a participant) and one LeaderObserver, for the observer tests. */
import { expect } from 'vitest';
import { createClient, RetryPolicies, type Client } from '@tenure/client';
import { LeaderLatch, LeaderObserver } from '@tenure/leader';

export async function openClient(connectString: string, closers: Array<() => Promise<unknown>>): Promise<Client> {
  const c = createClient({ connectString, sessionTimeoutMs: 4000, retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200) });
  closers.push(() => c.close());
  await c.start();
  return c;
}

/** Two latches (the second one also follows the leaders: a participant, not an observer) and one observer. */
export async function electionWithObserver(
  connectString: string,
  closers: Array<() => Promise<unknown>>,
  path = '/election',
): Promise<{ observer: Client; latches: LeaderLatch[] }> {
  const open = (cs: string) => openClient(cs, closers);
  const [a, b, o] = [await open(connectString), await open(connectString), await open(connectString)];
  const latches = [new LeaderLatch(a, path, { id: 'alpha' }), new LeaderLatch(b, path, { id: 'beta' })];
  for (const l of latches) {
    closers.push(() => l.close());
    await l.start();
  }
  const participantFollows = latches[1]!.leaders();
  expect((await participantFollows.next()).value).toMatchObject({ participantId: 'alpha' });
  const observer = new LeaderObserver(o, path);
  closers.push(() => observer.close());
  await observer.start();
  await Promise.all([a, b, o].map((c) => c.sync('/')));
  return { observer: o, latches };
}
