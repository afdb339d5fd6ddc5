/** FaultProxy over a plain echo server: pass, blackhole/heal without loss, reset, delay, close. */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { EventEmitter } from 'node:events';
import { FaultProxy, nextEvent } from '@tenure/testing';

let echo: Server;
let echoAddress: string;
const proxies: FaultProxy[] = [];
beforeEach(async () => {
  echo = createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoAddress = `127.0.0.1:${(echo.address() as { port: number }).port}`;
});
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.close();
  echo.close();
});

async function client(proxy: FaultProxy) {
  const s = connect(proxy.port, '127.0.0.1');
  await new Promise<void>((r) => s.once('connect', r));
  let received = '';
  // Every byte, error and close announces itself, so a test awaits the one it needs.
  const changed = new EventEmitter();
  s.on('data', (d: Buffer) => {
    received += d.toString();
    changed.emit('change');
  });
  const events: string[] = [];
  s.on('error', (e: NodeJS.ErrnoException) => {
    events.push(e.code ?? e.message);
    changed.emit('change');
  });
  s.on('close', () => {
    events.push('close');
    changed.emit('change');
  });
  return {
    s,
    get received() {
      return received;
    },
    events,
    /** Resolves true once `check()` holds (now, or after the change that makes it so). */
    async until(check: () => boolean, ms = 2000): Promise<boolean> {
      if (!check()) await nextEvent(changed, 'change', check, { timeoutMs: ms });
      return true;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(): Promise<FaultProxy> {
  const p = await FaultProxy.start(echoAddress);
  proxies.push(p);
  return p;
}

test('passes bytes both ways', async () => {
  const p = await start();
  const c = await client(p);
  c.s.write('hello');
  expect(await c.until(() => c.received === 'hello')).toBe(true);
  expect(p.connections[0]!.bytes).toEqual({ up: 5, down: 5 });
});

test('blackhole holds bytes until heal, then delivers them all in order', async () => {
  const p = await start();
  const c = await client(p);
  p.blackhole();
  c.s.write('a');
  c.s.write('b');
  await sleep(100);
  expect(c.received).toBe('');
  p.heal();
  expect(await c.until(() => c.received === 'ab')).toBe(true);
});

test('a connection made during a blackhole only reaches the server after heal', async () => {
  const p = await start();
  p.blackhole();
  const c = await client(p);
  c.s.write('late');
  await sleep(100);
  expect(c.received).toBe('');
  p.heal();
  expect(await c.until(() => c.received === 'late')).toBe(true);
});

test('reset sends RST to the client', async () => {
  const p = await start();
  const c = await client(p);
  p.reset();
  expect(await c.until(() => c.events.includes('close'))).toBe(true);
  expect(c.events).toContain('ECONNRESET');
  expect(p.connections).toEqual([]);
});

test('delay applies per direction; per-connection faults leave others alone', async () => {
  const p = await start();
  const slow = await client(p);
  const fast = await client(p);
  p.connections[0]!.delay(100);
  const t0 = Date.now();
  slow.s.write('x');
  fast.s.write('y');
  expect(await fast.until(() => fast.received === 'y')).toBe(true);
  expect(Date.now() - t0).toBeLessThan(100);
  expect(await slow.until(() => slow.received === 'x')).toBe(true);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
});

test('close() ends every connection', async () => {
  const p = await start();
  const c = await client(p);
  await p.close();
  expect(await c.until(() => c.events.includes('close'))).toBe(true);
  proxies.pop();
  void (c.s as Socket);
});
