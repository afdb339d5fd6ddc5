/** Observers in `tenure leaders` on a real ZooKeeper 3.8: its `wchp` (data and child watches listed apart), and its refusal. */
import { afterEach, describe, expect, it } from 'vitest';
import { realZooKeeper, TestingServer } from '@tenure/testing';
import { sessionHex } from '../src/index.js';
import { json, tenure } from './cli-harness.js';
import { electionWithObserver } from './observer-fixture.js';

const zk = realZooKeeper();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const f of closers.splice(0).reverse()) await f().catch(() => {});
});

describe.skipIf(!zk.available)('tenure leaders: observers on ZooKeeper 3.8', () => {
  it('wchp lists the observer; participants (and the leaders() follower) are not observers', async () => {
    const server = await TestingServer.start();
    closers.push(() => server.close());
    const { observer } = await electionWithObserver(server.connectString, closers);
    const doc = json(await tenure(['--server', server.connectString, 'leaders', '/election', '--json']));
    expect(doc.observers).toEqual({
      source: 'four-letter-words',
      problems: [],
      elections: [
        {
          path: '/election',
          kind: 'leader-latch',
          observers: [{ sessionId: sessionHex(observer.sessionId), server: server.connectString }],
        },
      ],
    });
    const rows = (await tenure(['--server', server.connectString, 'leaders', '/election'])).stdout
      .split('\n')
      .filter((l) => / observer /.test(l));
    expect(rows).toEqual([expect.stringMatching(new RegExp(`^/election +leader-latch +observer +- +${sessionHex(observer.sessionId)} `))]);
  });

  it('4lw.commands.whitelist without wchp: the warning says so, --json has source unavailable', async () => {
    const server = await TestingServer.start({ config: { '4lw.commands.whitelist': 'srvr' } });
    closers.push(() => server.close());
    await electionWithObserver(server.connectString, closers);
    const r = await tenure(['--server', server.connectString, 'leaders', '/election']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\/election +leader-latch +leader +alpha /m);
    expect(r.stderr).toMatch(/tenure: observers not shown: .*wchp is not executed because it is not in the whitelist/);
    expect(json(await tenure(['--server', server.connectString, 'leaders', '--json'])).observers.source).toBe('unavailable');
  });
});
