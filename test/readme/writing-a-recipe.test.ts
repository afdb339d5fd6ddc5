/**
 * The client README's "Writing a recipe": the OneShotBarrier it builds on the kit works as the
 * README says, leaves nothing behind, and the README shows exactly the tested file.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { AbortError, ClosedError, IllegalStateError, NoAuthError, READ_ACL_UNSAFE, TimeoutError } from '@tenure/client';
import { EventLog, TestClients, sleep, startTestServer } from '@tenure/testing';
import type { EmbeddedServer } from '@tenure/server';
import { OneShotBarrier } from '../../examples/one-shot-barrier.js';
import { KeptNode } from './kept-node.js';

let server: EmbeddedServer;
let clients: TestClients;
afterEach(async () => {
  await clients?.closeAll();
  await server?.close();
});

function setup(): void {
  server = startTestServer();
  clients = new TestClients(() => server.transport());
}

describe('Writing a recipe: OneShotBarrier', () => {
  it('holds every waiter until lowered, then lets them all pass', async () => {
    setup();
    const [a, b, c] = await clients.openMany(3);
    await using gate = new OneShotBarrier(a!, '/gates/start');
    await gate.raise();
    await gate.raise(); // raising a raised barrier is fine
    await using w1 = new OneShotBarrier(b!, '/gates/start');
    await using w2 = new OneShotBarrier(c!, '/gates/start');
    let passed = 0;
    const waits = [w1.passed().then(() => passed++), w2.passed().then(() => passed++)];
    await sleep(200);
    expect(passed).toBe(0);
    await gate.lower();
    await Promise.all(waits);
    expect(passed).toBe(2);
    await expect(w1.passed()).resolves.toBeUndefined(); // a lowered barrier passes at once
  });

  it('a wait rejects with TimeoutError, AbortError or ClosedError, and close leaves no watch on the server', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const gate = new OneShotBarrier(a!, '/gate');
    await gate.raise();
    const waiter = new OneShotBarrier(b!, '/gate');
    await expect(waiter.passed({ timeoutMs: 100 })).rejects.toBeInstanceOf(TimeoutError);
    const ac = new AbortController();
    const aborted = waiter.passed({ signal: ac.signal });
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    expect(server.watchCounts().get(b!.sessionId)).toBeGreaterThan(0);
    await waiter.close();
    expect(server.watchCounts().get(b!.sessionId) ?? 0).toBe(0);
    const pending = waiter.passed();
    await b!.close();
    await expect(pending).rejects.toBeInstanceOf(ClosedError);
    await gate.close();
  });

  it('is the code the client README shows', () => {
    const readme = readFileSync(new URL('../../packages/client/README.md', import.meta.url), 'utf8');
    const source = readFileSync(new URL('../../examples/one-shot-barrier.ts', import.meta.url), 'utf8');
    const body = source.slice(source.indexOf('import '));
    expect(readme).toContain('## Writing a recipe');
    expect(readme).toContain(body.trim());
    expect(body.split('\n').length).toBeLessThan(50);
  });
});

describe('Writing a recipe: KeptNode, on the whole kit', () => {
  it('keeps its node through deletes by others, follows the lifecycle, and leaves nothing behind', async () => {
    setup();
    const [a, b] = await clients.openMany(2);
    const node = new KeptNode(a!, '/kept/me');
    const created = new EventLog<string>();
    node.on('created', (p) => created.push(p));
    expect(node.state).toBe('latent');
    await node.start();
    expect(node.state).toBe('started');
    await expect(node.start()).rejects.toBeInstanceOf(IllegalStateError);
    await created.atLeast(1);
    expect(await b!.exists('/kept/me')).not.toBeNull();
    await b!.delete('/kept/me');
    await created.atLeast(2); // made again
    expect(created).toHaveLength(2);
    const closing = node.close();
    expect(node.close()).toBe(closing);
    await closing;
    expect(node.state).toBe('closed');
    await expect(node.start()).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
    expect(await b!.exists('/kept/me')).toBeNull();
    expect(server.watchCounts().get(a!.sessionId) ?? 0).toBe(0);
  });

  it('NoAuth is reported once and not retried', async () => {
    setup();
    const [a] = await clients.openMany(1);
    await a!.create('/locked', null, { acl: READ_ACL_UNSAFE });
    const errors = new EventLog<Error>();
    await using node = new KeptNode(a!, '/locked/me');
    node.on('error', (e) => errors.push(e));
    await node.start();
    await errors.atLeast(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(NoAuthError);
    await sleep(200);
    expect(errors).toHaveLength(1);
  });

  it('is the code the client README shows', () => {
    const readme = readFileSync(new URL('../../packages/client/README.md', import.meta.url), 'utf8');
    const source = readFileSync(new URL('./kept-node.ts', import.meta.url), 'utf8');
    const body = source.slice(source.indexOf('import '));
    expect(readme).toContain('### The recipe kit');
    expect(readme).toContain(body.trim());
  });
});
