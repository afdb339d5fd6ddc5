/**
 * The `tenure ui` page server over HTTP (no browser): its JSON routes against Tenure's recipes on
 * the embedded server, read-only refusals, CSRF and cross-site checks, basic auth, the Host check,
 * the pushed event stream from the one persistent watch, and the polling fallback.
 * The page itself is tested in headless Chromium (ui-page.slow.test.ts).
 */
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RetryPolicies, type Client } from '@tenure/client';
import { LeaderLatch } from '@tenure/leader';
import { Mutex } from '@tenure/locks';
import { eventually, nextEvent, TestingEmbeddedServer } from '@tenure/testing';
import { main, startUi, UiOptionsError, type UiServer } from '../src/index.js';
import type { ChildrenPage, NodeView, Overview, UiStatus } from '../src/ui/index.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly the headers given (fetch would add Origin / Sec-Fetch-* of its own). */
function http(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function json<T>(url: string, headers?: Record<string, string>): Promise<T> {
  const a = await http(url, headers ? { headers } : {});
  expect(a.status, a.body).toBe(200);
  return JSON.parse(a.body) as T;
}

/** Retries `check` (assertions) until it passes or `timeoutMs` runs out. */
function until(check: () => unknown, timeoutMs = 5000): Promise<unknown> {
  return eventually(async () => {
    await check();
    return true;
  }, timeoutMs);
}

function watchesOf(server: TestingEmbeddedServer, client: Client): number {
  return server.server.sessions().find((s) => s.sessionId === client.sessionId)?.watches ?? 0;
}

function csrfOf(html: string): string {
  const m = /name="tenure-csrf" content="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token in the page');
  return m[1]!;
}

const WRITES: { path: string; body: object }[] = [
  { path: '/api/create', body: { path: '/app/new', data: 'x' } },
  { path: '/api/set', body: { path: '/app/config', data: 'changed' } },
  { path: '/api/delete', body: { path: '/app/config' } },
];

describe('tenure ui: the page server', () => {
  let server: TestingEmbeddedServer;
  const clients: Client[] = [];
  const closers: Array<() => Promise<unknown>> = [];

  async function open(): Promise<Client> {
    const c = createClient({
      connectString: server.connectString,
      sessionTimeoutMs: 4000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200),
    });
    clients.push(c);
    await c.start();
    return c;
  }

  async function ui(options: Partial<Parameters<typeof startUi>[0]> = {}): Promise<UiServer> {
    const client = await open();
    const u = await startUi({ client, connectString: server.connectString, port: 0, ...options });
    closers.push(() => u.close());
    return u;
  }

  beforeAll(async () => {
    server = await TestingEmbeddedServer.start();
    const c = await open();
    await c.create('/app/config', 'v1', { createParents: true });
  });
  afterEach(async () => {
    for (const f of closers.splice(0).reverse()) await f().catch(() => {});
    await Promise.all(clients.splice(1).map((c) => c.close()));
  });
  afterAll(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await server.close();
  });

  it('serves the page, its status and an overview of locks and elections', async () => {
    const [a, b, c] = [await open(), await open(), await open()];
    const lease = await new Mutex(a, '/locks/orders', { data: 'holder-A' }).acquire();
    const waiting = new Mutex(b, '/locks/orders', { data: 'waiter-B' }).acquire().catch(() => null);
    closers.push(async () => (await waiting)?.release()); // runs after A's release below
    closers.push(() => lease.release());
    const latch = new LeaderLatch(c, '/election', { id: 'alpha' });
    await latch.start();
    closers.push(() => latch.close());
    await latch.await({ timeoutMs: 5000 });

    const u = await ui();
    expect(u.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await http(u.url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(csrfOf(page.body)).toMatch(/\./);

    const status = await json<UiStatus>(`${u.url}api/status`);
    expect(status).toMatchObject({ live: 'push', write: false, auth: false, exposed: false, zookeeper: server.connectString });

    await until(async () => {
      const o = await json<Overview>(`${u.url}api/overview`);
      const lock = o.report!.locks.find((l) => l.path === '/locks/orders')!;
      expect(lock.holder?.data.value).toBe('holder-A');
      expect(lock.waiters.map((w) => w.data.value)).toEqual(['waiter-B']);
      expect(o.report!.elections.find((e) => e.path === '/election')?.leader?.id).toBe('alpha');
      expect(o.sessions?.sessions.length).toBeGreaterThan(0);
    });
  });

  it('lists children a page at a time with their Stats, and reads a node with its Stat and ACL', async () => {
    const c = await open();
    for (let i = 0; i < 5; i++) await c.create(`/paged/n${i}`, `v${i}`, { createParents: true });
    const u = await ui();
    const first = await json<ChildrenPage>(`${u.url}api/children?path=/paged&offset=0&limit=2`);
    expect(first.total).toBe(5);
    expect(first.children.map((e) => e.name)).toEqual(['n0', 'n1']);
    const rest = await json<ChildrenPage>(`${u.url}api/children?path=/paged&offset=2&limit=10`);
    expect(rest.children.map((e) => e.name)).toEqual(['n2', 'n3', 'n4']);
    expect(rest.children[0]).toMatchObject({ path: '/paged/n2', dataLength: 2, numChildren: 0, ephemeral: false });

    const node = await json<NodeView>(`${u.url}api/node?path=/app/config`);
    expect(Buffer.from(node.data, 'base64').toString()).toBe('v1');
    expect(node.text).toBe('v1');
    expect(node.stat.dataLength).toBe(2);
    expect(node.acl).toEqual([{ scheme: 'world', id: 'anyone', perms: 31, permString: 'cdrwa' }]);
    const missing = await http(`${u.url}api/node?path=/nope`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ code: 'NONODE' });
  });

  it('read-only: every write route and method answers 403 and no node changes', async () => {
    const c = await open();
    const before = await c.getData('/app/config');
    const u = await ui();
    const token = csrfOf((await http(u.url)).body);
    const headers = { 'Content-Type': 'application/json', 'X-Tenure-Csrf': token };
    for (const w of WRITES) {
      const a = await http(`${u.url.slice(0, -1)}${w.path}`, { method: 'POST', headers, body: JSON.stringify(w.body) });
      expect(a.status, w.path).toBe(403);
      expect(JSON.parse(a.body).error).toContain('read-only');
    }
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      expect((await http(`${u.url}api/node?path=/app/config`, { method, headers })).status, method).toBe(403);
    }
    const after = await c.getData('/app/config');
    expect(after.data.toString()).toBe(before.data.toString());
    expect(after.stat.mzxid).toBe(before.stat.mzxid);
    expect(await c.exists('/app/new')).toBeNull();
  });

  it('--write: writes need the page token, a JSON body and a same-origin request', async () => {
    const c = await open();
    await c.create('/w/target', 'old', { createParents: true });
    const u = await ui({ write: true });
    const token = csrfOf((await http(u.url)).body);
    const base = u.url.slice(0, -1);
    const set = (headers: Record<string, string>): Promise<Answer> =>
      http(`${base}/api/set`, { method: 'POST', headers, body: JSON.stringify({ path: '/w/target', data: 'new' }) });

    expect((await set({ 'Content-Type': 'application/json' })).status).toBe(403);
    expect((await set({ 'Content-Type': 'application/json', 'X-Tenure-Csrf': 'forged.token' })).status).toBe(403);
    expect((await set({ 'Content-Type': 'text/plain', 'X-Tenure-Csrf': token })).status).toBe(415);
    expect((await set({ 'Content-Type': 'application/json', 'X-Tenure-Csrf': token, Origin: 'http://evil.example' })).status).toBe(403);
    expect((await set({ 'Content-Type': 'application/json', 'X-Tenure-Csrf': token, 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    expect((await c.getData('/w/target')).data.toString()).toBe('old');

    const ok = await set({ 'Content-Type': 'application/json', 'X-Tenure-Csrf': token, Origin: base, 'Sec-Fetch-Site': 'same-origin' });
    expect(ok.status, ok.body).toBe(200);
    expect((await c.getData('/w/target')).data.toString()).toBe('new');

    const headers = { 'Content-Type': 'application/json', 'X-Tenure-Csrf': token };
    const created = await http(`${base}/api/create`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ path: '/w/bin', data: '//8=', encoding: 'base64' }),
    });
    expect(created.status, created.body).toBe(200);
    expect([...(await c.getData('/w/bin')).data]).toEqual([0xff, 0xff]);
    const conflict = await http(`${base}/api/create`, { method: 'POST', headers, body: JSON.stringify({ path: '/w/bin' }) });
    expect(conflict.status).toBe(409);
    expect(JSON.parse(conflict.body).code).toBe('NODEEXISTS');
    const deleted = await http(`${base}/api/delete`, { method: 'POST', headers, body: JSON.stringify({ path: '/w', recursive: true }) });
    expect(deleted.status, deleted.body).toBe(200);
    expect(await c.exists('/w')).toBeNull();
  });

  it('beyond loopback it needs --ui-auth, then asks every request for basic auth', async () => {
    const client = await open();
    await expect(startUi({ client, host: '0.0.0.0', port: 0 })).rejects.toThrow(UiOptionsError);
    await expect(startUi({ client, host: '0.0.0.0', port: 0 })).rejects.toThrow(/--ui-auth/);

    const u = await ui({ host: '0.0.0.0', uiAuth: 'ops:s3cret' });
    const url = `http://127.0.0.1:${u.port}/`;
    const refused = await http(`${url}api/status`);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('Basic');
    expect((await http(url, { headers: { Authorization: `Basic ${Buffer.from('ops:wrong').toString('base64')}` } })).status).toBe(401);
    const status = await json<UiStatus>(`${url}api/status`, { Authorization: `Basic ${Buffer.from('ops:s3cret').toString('base64')}` });
    expect(status).toMatchObject({ auth: true, exposed: true, write: false });
  });

  it('on loopback without auth, refuses Host names other than loopback ones (DNS rebinding)', async () => {
    const u = await ui();
    expect((await http(`${u.url}api/status`, { headers: { Host: 'attacker.example' } })).status).toBe(403);
    expect((await http(`${u.url}api/status`, { headers: { Host: `localhost:${u.port}` } })).status).toBe(200);
  });

  it('pushes a new overview over server-sent events within 2 s of a change, from one persistent watch', async () => {
    const [a, b, uiClient] = [await open(), await open(), await open()];
    const u = await ui({ client: uiClient });
    const events: { event: string; data: unknown }[] = [];
    const req = request(`${u.url}api/events`);
    const opened = new Promise<void>((resolve) =>
      req.on('response', (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event && data) events.push({ event, data: JSON.parse(data) });
          }
        });
        resolve();
      }),
    );
    req.end();
    closers.push(async () => req.destroy());
    await opened;
    // Two more pages listening: still the one watch.
    const more = [request(`${u.url}api/events`), request(`${u.url}api/events`)];
    for (const r of more) {
      r.on('error', () => {});
      r.end();
      closers.push(async () => r.destroy());
    }
    await until(() => expect(events.some((e) => e.event === 'overview')).toBe(true));

    const lease = await new Mutex(a, '/live/lock', { data: 'first' }).acquire();
    const second = new Mutex(b, '/live/lock', { data: 'second' }).acquire();
    const heldBy = (holder: string) => (e: { event: string; data: unknown }) =>
      e.event === 'overview' && (e.data as Overview).report?.locks.some((l) => l.path === '/live/lock' && l.holder?.data.value === holder);
    await until(() => expect(events.some(heldBy('first'))).toBe(true), 2000);
    const t0 = Date.now();
    await lease.release();
    await until(() => expect(events.some(heldBy('second'))).toBe(true), 2000);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(
      events.some((e) => e.event === 'tree' && ((e.data as { paths: string[] | null }).paths ?? ['/live/lock']).includes('/live/lock')),
    ).toBe(true);
    await (await second).release();

    // One persistent recursive watch for the page server's session (it counts once in the data
    // and once in the child table), however many pages listen.
    expect(watchesOf(server, uiClient)).toBeLessThanOrEqual(2);
  });

  it('closes its watch and its connections on close()', async () => {
    const client = await open();
    const u = await startUi({ client, port: 0 });
    await u.close();
    await u.closed;
    await expect(http(u.url)).rejects.toThrow();
    expect(watchesOf(server, client)).toBe(0);
  });

  it('says "polling" when the server refuses persistent watches (a 3.5 server)', async () => {
    await using old = await TestingEmbeddedServer.start({ persistentWatches: false });
    const client = createClient({ connectString: old.connectString, sessionTimeoutMs: 4000 });
    clients.push(client);
    await client.start();
    await client.create('/locks/q', null, { createParents: true });
    const u = await startUi({ client, connectString: old.connectString, port: 0 });
    closers.push(() => u.close());
    const status = await json<UiStatus>(`${u.url}api/status`);
    expect(status.live).toBe('polling');
    expect(status.liveReason).toMatch(/persistent watch/);
    const other = createClient({ connectString: old.connectString, sessionTimeoutMs: 4000 });
    clients.push(other);
    await other.start();
    const lease = await new Mutex(other, '/locks/q', { data: 'polled' }).acquire();
    // Each poll gets a fresh overview.
    await until(async () => {
      const o = await json<Overview>(`${u.url}api/overview`);
      expect(o.report!.locks.find((l) => l.path === '/locks/q')?.holder?.data.value).toBe('polled');
    }, 2000);
    await lease.release();
    await u.close();
  });

  it('`tenure ui` runs the page server until its signal aborts; --host 0.0.0.0 without --ui-auth is bad usage (exit 2)', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const stop = new AbortController();
    const io = { stdin: new PassThrough(), stdout, stderr, env: {}, signal: stop.signal };
    const running = main(['--server', server.connectString, 'ui', '--port', '0', '--write'], io);
    const address = /http:\/\/127\.0\.0\.1:\d+\//;
    if (!address.test(out)) await nextEvent(stdout, 'data', () => address.test(out), { timeoutMs: 10_000 });
    const url = address.exec(out)![0];
    expect(out).toContain('writes enabled');
    expect(await json<UiStatus>(`${url}api/status`)).toMatchObject({ live: 'push', write: true });
    stop.abort();
    expect(await running).toBe(0);
    await expect(http(url)).rejects.toThrow();

    expect(
      await main(['--server', server.connectString, 'ui', '--host', '0.0.0.0', '--port', '0'], {
        ...io,
        signal: new AbortController().signal,
      }),
    ).toBe(2);
    expect(err).toContain('--ui-auth');
    expect(err.trim().split('\n')).toHaveLength(1);
  });
});
