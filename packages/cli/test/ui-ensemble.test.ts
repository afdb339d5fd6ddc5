/** The page server's overview carries the ensemble (the Sessions view draws it above the sessions). */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@tenure/client';
import { eventually, TestingEmbeddedServer } from '@tenure/testing';
import { startUi, type UiServer } from '../src/index.js';
import type { Overview } from '../src/ui/index.js';

async function overview(u: UiServer): Promise<Overview> {
  const res = await fetch(`${u.url}api/overview`);
  expect(res.status).toBe(200);
  return (await res.json()) as Overview;
}

describe('tenure ui: the ensemble', () => {
  let server: TestingEmbeddedServer;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    server = await TestingEmbeddedServer.start();
  });
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await server?.close();
  });

  async function ui(): Promise<UiServer> {
    const client = createClient({ connectString: server.connectString });
    await client.start();
    closers.push(() => client.close());
    const u = await startUi({ client, connectString: server.connectString, port: 0 });
    closers.push(() => u.close());
    return u;
  }

  it('a standalone server: no members, the client host list and its server', async () => {
    const u = await ui();
    expect((await overview(u)).ensemble).toEqual({
      members: [],
      version: '',
      hosts: [server.connectString],
      connectedServer: server.connectString,
    });
  });

  it("a dynamic config: its members and version, and the client's host list as tracking made it", async () => {
    const version = server.server.setEnsembleConfig([
      `server.1=127.0.0.1:1:2:participant;${server.connectString}`,
      'server.2=127.0.0.1:3:4:observer;127.0.0.1:9',
    ]);
    const u = await ui();
    const e = await eventually(async () => {
      const o = (await overview(u)).ensemble;
      return o?.hosts.length === 2 ? o : undefined;
    }, 10_000);
    expect(e.version).toBe(version);
    expect(e.members.map((m) => [m.id, m.role])).toEqual([
      ['1', 'participant'],
      ['2', 'observer'],
    ]);
    expect([...e.hosts].sort()).toEqual([server.connectString, '127.0.0.1:9'].sort());
  });
});
