/**
 * @tenure/client with @tenure/ws in a real browser: a page bundled with esbuild (the browser
 * entries, `Buffer` from the `buffer` package) runs in headless Chromium (Debian's `chromium`,
 * driven by puppeteer-core) and takes a Mutex on the embedded server over WebSocket, while a Node
 * client waits for the same lock over TCP. The page releases; the Node client gets the lock. The
 * test page runs on a plain http:// origin (no crypto.randomUUID), the README's snippet on
 * 127.0.0.1 (a secure context); the listener admits only the page's origin.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient } from '@tenure/client';
import { Mutex } from '@tenure/locks';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { childrenUntil, launchChromium, sleep, type ChromiumHandle } from '@tenure/testing';
import { bundleForBrowser, readmeSnippet, repoRoot } from './bundle.js';

const LOCK = '/locks/browser';

/** What the page exposes on globalThis (see page/mutex-page.ts). */
interface PageApi {
  connect(url: string): Promise<{ sessionId: string; states: string[] }>;
  acquire(path: string): Promise<{ token: string; node: string }>;
  release(): Promise<void>;
  close(): Promise<{ closed: boolean; states: string[] }>;
}
declare const tenure: PageApi;

const html = (script: string): string =>
  `<!doctype html><meta charset="utf-8"><title>tenure</title><link rel="icon" href="data:,">` +
  `<p id="status">loading</p><button id="release">release</button><script type="module" src="/${script}"></script>`;

const INSECURE_HOST = 'tenure.test';

const inject = [`${repoRoot}test/browser/page/buffer-shim.ts`];

/**
 * Serves two pages on 127.0.0.1: `/` runs the test page (page/mutex-page.ts), `/readme` the
 * README's snippet. The browser reaches 127.0.0.1 under two names: itself (a secure context, as
 * localhost is) and INSECURE_HOST (a plain http:// origin, where crypto.randomUUID is missing).
 */
async function servePages(scripts: { page: string; readme: string }): Promise<{ http: Server; port: number }> {
  const http = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(html('page.js'));
    else if (path === '/readme') res.writeHead(200, { 'content-type': 'text/html' }).end(html('readme.js'));
    else if (path === '/page.js' || path === '/readme.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(path === '/page.js' ? scripts.page : scripts.readme);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { http, port: (http.address() as AddressInfo).port };
}

describe('a browser client over WebSocket', () => {
  let server: EmbeddedServer;
  let chromium: ChromiumHandle;
  let http: Server;
  let origin: string;
  let insecureOrigin: string;

  beforeAll(async () => {
    const page = await bundleForBrowser(`import './test/browser/page/mutex-page.ts';`, { inject });
    const readme = await bundleForBrowser(readmeSnippet(), { inject });
    expect([...page.forbidden, ...readme.forbidden]).toEqual([]);
    expect([...page.nodeGlobals, ...readme.nodeGlobals]).toEqual([]);
    let port: number;
    ({ http, port } = await servePages({ page: page.code, readme: readme.code }));
    origin = `http://127.0.0.1:${port}`;
    insecureOrigin = `http://${INSECURE_HOST}:${port}`;
    server = createEmbeddedServer();
    chromium = await launchChromium({ args: [`--host-resolver-rules=MAP ${INSECURE_HOST} 127.0.0.1`] });
  });

  afterAll(async () => {
    await chromium?.close();
    await new Promise((resolve) => http?.close(resolve));
    await server?.close();
  });

  test('the page (a plain http:// origin) holds a Mutex while a Node client waits for it; the page releases, Node gets it', async () => {
    // Only the page's origin may open a browser WebSocket; the Node clients send no Origin.
    const { url } = await server.listen({ port: 0, host: '127.0.0.1', webSocket: { path: '/zookeeper', origins: [insecureOrigin] } });
    const { connectString } = await server.listen({ port: 0, host: '127.0.0.1' });

    const page = await chromium.browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`pageerror: ${String(err)}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warn') problems.push(`console.${msg.type()}: ${msg.text()}`);
    });
    // A plain http:// origin: no crypto.randomUUID there, so protected ids come from getRandomValues.
    await page.goto(`${insecureOrigin}/`);
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'ready', { timeout: 20_000 });
    expect(await page.evaluate(() => [isSecureContext, typeof crypto.randomUUID])).toEqual([false, 'undefined']);

    const session = await page.evaluate((u) => tenure.connect(u), url);
    expect(session.states).toEqual(['CONNECTED']);
    expect(BigInt(session.sessionId)).not.toBe(0n);

    const held = await page.evaluate((p) => tenure.acquire(p), LOCK);
    expect(held.node).toMatch(new RegExp(`^${LOCK}/_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-lock-\\d{10}$`));
    expect(await page.$eval('#status', (el) => el.textContent)).toBe(`holding ${held.token}`);

    await using node = createClient({ connectString });
    await node.start();
    // The browser's node is the server's, under the browser's session.
    expect((await node.exists(held.node))?.ephemeralOwner.toString()).toBe(session.sessionId);

    const mutex = new Mutex(node, LOCK);
    let granted = false;
    const waiting = mutex.acquire({ timeoutMs: 60_000 }).then((lease) => {
      granted = true;
      return lease;
    });
    await childrenUntil(node, LOCK, (kids) => kids.length === 2, { timeoutMs: 20_000 }); // the Node client queued
    await sleep(300);
    expect(granted).toBe(false); // queued behind the page

    await page.evaluate(() => tenure.release());
    expect(await page.$eval('#status', (el) => el.textContent)).toBe('released');
    const lease = await waiting;
    expect(lease.fencingToken).toBeGreaterThan(BigInt(held.token));
    expect((await node.getChildren(LOCK)).children).toEqual([lease.path.slice(LOCK.length + 1)]);
    await lease.release();
    await mutex.close();

    // One session throughout: no SUSPENDED, no reconnect.
    expect(await page.evaluate(() => tenure.close())).toEqual({ closed: true, states: ['CONNECTED'] });
    expect(await page.$eval('#status', (el) => el.textContent)).toBe('closed');
    // The browser's session ended with its close: only the Node client's is left.
    expect(server.sessions().map((s) => s.sessionId.toString())).not.toContain(session.sessionId);
    expect(problems).toEqual([]);
    await page.close();
  });

  test("the client README's browser snippet runs as it stands: it takes the lock, the button releases it", async () => {
    const { url } = await server.listen({ port: 0, host: '127.0.0.1', webSocket: { path: '/zookeeper', origins: [origin] } });
    await using node = createClient({ transport: server.transport() });
    await node.start();
    const page = await chromium.browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`pageerror: ${String(err)}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warn') problems.push(`console.${msg.type()}: ${msg.text()}`);
    });
    await page.goto(`${origin}/readme?zk=${encodeURIComponent(url)}`);
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('holding'), { timeout: 20_000 });
    const status = await page.$eval('#status', (el) => el.textContent!);
    const token = BigInt(/fencing token (\d+)$/.exec(status)![1]!);

    const mutex = new Mutex(node, '/locks/report');
    const waiting = mutex.acquire({ timeoutMs: 60_000 });
    await childrenUntil(node, '/locks/report', (kids) => kids.length === 2, { timeoutMs: 20_000 }); // the Node client queued
    await page.click('#release');
    const lease = await waiting;
    expect(lease.fencingToken).toBeGreaterThan(token);
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'released', { timeout: 20_000 });
    await lease.release();
    await mutex.close();
    expect(problems).toEqual([]);
    await page.close();
  });
});
