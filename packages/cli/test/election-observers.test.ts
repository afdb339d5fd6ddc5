/**
 * Observers of elections in `tenure leaders` and the page's overview: sessions watching an
 * election's path without a node in it (LeaderObservers), read from `wchp` of the embedded server
 * over TCP; a server that refuses `wchp` is said to, not guessed around.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, TestingEmbeddedServer } from '@tenure/testing';
import { parseWchp, sessionHex, startUi } from '../src/index.js';
import type { Overview } from '../src/ui/index.js';
import { json, tenure } from './cli-harness.js';
import { electionWithObserver, openClient } from './observer-fixture.js';

const closers: Array<() => Promise<unknown>> = [];
const open = (connectString: string) => openClient(connectString, closers);
const election = (connectString: string, path?: string) => electionWithObserver(connectString, closers, path);
afterEach(async () => {
  for (const f of closers.splice(0).reverse()) await f().catch(() => {});
});

async function serverWith(options: Parameters<typeof TestingEmbeddedServer.start>[0] = {}): Promise<TestingEmbeddedServer> {
  const server = await TestingEmbeddedServer.start(options);
  closers.push(() => server.close());
  return server;
}

describe('parseWchp', () => {
  it("reads ZooKeeper's format: a path, then its sessions tab-indented", () => {
    const answer = '/election\n\t0x1000002a3b40001\n\t0x1000002a3b40003\n/election/_c_x-latch-0000000000\n\t0x1000002a3b40002\n\n';
    expect(parseWchp(answer)).toEqual(
      new Map([
        ['/election', ['0x1000002a3b40001', '0x1000002a3b40003']],
        ['/election/_c_x-latch-0000000000', ['0x1000002a3b40002']],
      ]),
    );
  });
});

describe('tenure leaders: observers', () => {
  it('lists the sessions watching the election path that take no part, as observer rows and in --json', async () => {
    const server = await serverWith();
    const { observer } = await election(server.connectString);
    const table = (await tenure(['--server', server.connectString, 'leaders', '/election'])).stdout;
    expect(table).toMatch(/^\/election +leader-latch +leader +alpha +0x/m);
    const rows = table.split('\n').filter((l) => / observer /.test(l));
    expect(rows).toHaveLength(1); // beta watches the path too, but takes part
    expect(rows[0]).toMatch(new RegExp(`^/election +leader-latch +observer +- +${sessionHex(observer.sessionId)} `));
    const doc = json(await tenure(['--server', server.connectString, 'leaders', '--json']));
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
  });

  it('under a chroot: the paths are the chroot’s, the observers still found', async () => {
    const server = await serverWith();
    await (await open(server.connectString)).create('/apps', null);
    const { observer } = await election(`${server.connectString}/apps`, '/election');
    const doc = json(await tenure(['--server', `${server.connectString}/apps`, 'leaders', '--json']));
    expect(doc.elections.map((e: { path: string }) => e.path)).toEqual(['/election']);
    expect(doc.observers.elections[0].observers).toEqual([{ sessionId: sessionHex(observer.sessionId), server: server.connectString }]);
  });

  it('a server that refuses wchp: the participants are shown, and a warning says observers are not', async () => {
    const server = await serverWith({ fourLetterWords: ['srvr'] });
    await election(server.connectString);
    const r = await tenure(['--server', server.connectString, 'leaders', '/election']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\/election +leader-latch +leader +alpha /m);
    expect(r.stdout).not.toMatch(/ observer /);
    expect(r.stderr).toContain(
      `tenure: observers not shown: ${server.connectString}: wchp is not executed because it is not in the whitelist.`,
    );
    const doc = json(await tenure(['--server', server.connectString, 'leaders', '--json']));
    expect(doc.observers.source).toBe('unavailable');
    expect(doc.observers.problems[0].reason).toMatch(/not in the whitelist/);
  });
});

describe('the page overview: observers', () => {
  it('carries the observers of each election (from wchp), not the page server’s own session', async () => {
    const server = await serverWith();
    const { observer } = await election(server.connectString);
    const client = await open(server.connectString);
    const ui = await startUi({ client, connectString: server.connectString, port: 0 });
    closers.push(() => ui.close());
    const overview = await eventually(async () => {
      const o = await getJson<Overview>(`${ui.url}api/overview`);
      return o.observers?.elections.length ? o : null;
    }, 5000);
    expect(overview.observers).toMatchObject({
      source: 'four-letter-words',
      elections: [{ path: '/election', observers: [{ sessionId: sessionHex(observer.sessionId) }] }],
    });
  });
});

function getJson<T>(url: string): Promise<T> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T));
    })
      .on('error', reject)
      .end();
  });
}
