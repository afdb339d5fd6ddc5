/**
 * The browser entry (browser.ts, the package's "browser" export condition) offers what the Node
 * entry offers, and its createClient works over a transport and refuses a connectString. That it
 * carries no `node:` import is checked by bundling it: test/browser/browser-entries.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { createEmbeddedServer } from '@tenure/server';
import * as browser from '../src/browser.js';
import * as node from '../src/index.js';
import { InvalidArgumentError } from '../src/index.js';

describe('the browser entry', () => {
  test('exports the same names as the Node entry', () => {
    expect(Object.keys(browser).sort()).toEqual(Object.keys(node).sort());
    expect(browser.createClient).not.toBe(node.createClient);
    expect(browser.Client).toBe(node.Client);
  });

  test('package.json selects it under the "browser" condition, which comes first (a browser resolver takes it, and its types, before "types")', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.exports['.'].browser).toEqual({ types: './dist/browser.d.ts', default: './dist/browser.js' });
    expect(pkg.exports['.'].default).toBe('./dist/index.js');
    expect(Object.keys(pkg.exports['.'])[0]).toBe('browser');
  });

  test('createClient refuses a connectString or tls (TCP needs Node) and a missing transport, with InvalidArgumentError', () => {
    expect(() => browser.createClient({ connectString: '127.0.0.1:2181' })).toThrow(/connectString.*Node.*webSocket/);
    expect(() => browser.createClient({ tls: true } as never)).toThrow(/tls.*trust store/);
    expect(() => browser.createClient({})).toThrow(InvalidArgumentError);
    expect(() => browser.createClient({ transport: {} as never })).toThrow(/transport is required/);
  });

  test('createClient over a transport is a working client', async () => {
    await using server = createEmbeddedServer();
    await using client = browser.createClient({ transport: server.transport(), namespace: '/app' });
    await client.start();
    await client.create('/x', Buffer.from('y'));
    expect((await client.getData('/x')).data.toString()).toBe('y');
    expect(client.state).toBe(browser.ConnectionState.CONNECTED);
    await using plain = node.createClient({ transport: server.transport() });
    await plain.start();
    expect(await plain.exists('/app/x')).not.toBeNull(); // the namespace applies
  });

  test('protected ids are v4 UUIDs where crypto.randomUUID is missing too (an insecure browser origin)', () => {
    const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(browser.newProtectedId()).toMatch(v4);
    Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      const ids = Array.from({ length: 200 }, () => browser.newProtectedId());
      for (const id of ids) expect(id).toMatch(v4);
      expect(new Set(ids).size).toBe(200);
    } finally {
      delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID;
    }
    expect(typeof globalThis.crypto.randomUUID).toBe('function');
  });
});
