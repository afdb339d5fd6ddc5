/** WatchSlot: one watched node at a time, never a watch left behind. */
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import { WatchSlot } from '../src/watch-slot.js';
import { Clients, startServer, totalWatches } from './harness.js';

let server: EmbeddedServer;
let clients: Clients;

beforeEach(() => {
  server = startServer();
  clients = new Clients(() => server.transport());
});

afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

test('watching, then a change calls onChange once and leaves the slot idle; a missing node is gone with no watch', async () => {
  const c = await clients.open();
  await c.create('/a', Buffer.from('1'));
  const slot = new WatchSlot(c, () => true);
  const changes: string[] = [];
  let changed!: () => void;
  const change = new Promise<void>((resolve) => (changed = resolve));
  expect(await slot.watch('/a', (ev) => (changes.push(ev.type), changed()))).toBe('watching');
  expect(slot.holds('/a')).toBe(true);
  expect(slot.idle).toBe(false);
  await c.setData('/a', Buffer.from('2'));
  await change;
  expect(changes).toEqual(['NodeDataChanged']);
  expect(slot.idle).toBe(true);
  expect(slot.holds('/a')).toBe(false);
  expect(await slot.watch('/missing', () => changes.push('missing'))).toBe('gone');
  expect(slot.idle).toBe(true);
  expect(totalWatches(server)).toBe(0);
});

test('a watch replaced, dropped while being set, or landing once the owner is gone is taken back; forget() sends nothing', async () => {
  const c = await clients.open();
  await c.create('/a', Buffer.alloc(0));
  await c.create('/b', Buffer.alloc(0));
  let live = true;
  const slot = new WatchSlot(c, () => live);
  const calls: string[] = [];
  expect(await slot.watch('/a', () => calls.push('a'))).toBe('watching');
  expect(await slot.watch('/b', () => calls.push('b'))).toBe('watching');
  await c.sync('/'); // after the removal of /a's watch, sent without waiting
  expect(server.watchesOf(c.sessionId).data).toEqual(['/b']);
  const setting = slot.watch('/a', () => calls.push('a2'));
  slot.drop();
  expect(await setting).toBe('dropped');
  await c.sync('/');
  expect(totalWatches(server)).toBe(0);
  const late = slot.watch('/a', () => calls.push('a3'));
  live = false;
  expect(await late).toBe('dropped');
  await c.sync('/');
  expect(totalWatches(server)).toBe(0);
  live = true;
  expect(await slot.watch('/a', () => calls.push('a4'))).toBe('watching');
  slot.forget();
  expect(slot.idle).toBe(true);
  expect(totalWatches(server)).toBe(1); // forgotten, not removed: our own delete would fire it
  await c.delete('/a'); // fires the watch on the server as it deletes
  expect(totalWatches(server)).toBe(0);
  expect(calls).toEqual([]);
});
