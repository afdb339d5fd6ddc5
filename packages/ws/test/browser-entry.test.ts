/**
 * The browser entry (the package's "browser" export condition): no `node:` import and no `ws` in
 * its own module graph, and it works over any WHATWG WebSocket constructor (here `ws`'s, standing in
 * for a browser's; the Chromium test runs it in a real browser).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { OpCode } from '@tenure/protocol';
import { createEmbeddedServer } from '@tenure/server';
import { webSocket } from '../src/browser.js';

const src = join(dirname(fileURLToPath(import.meta.url)), '../src');

/** The package-local modules browser.ts reaches, with every import specifier they use. */
function moduleGraph(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    const text = readFileSync(join(src, file), 'utf8');
    const specs = [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
    seen.set(file, specs);
    for (const s of specs) if (s.startsWith('./')) visit(s.slice(2).replace(/\.js$/, '.ts'));
  };
  visit(entry);
  return seen;
}

describe('the browser entry', () => {
  test('imports nothing from node: and nothing from ws', () => {
    const graph = moduleGraph('browser.ts');
    expect([...graph.keys()].sort()).toEqual(['browser.ts', 'urls.ts', 'websocket-like.ts', 'ws-connection.ts', 'ws-transport.ts']);
    const external = [...graph.values()].flat().filter((s) => !s.startsWith('./'));
    expect(new Set(external)).toEqual(new Set(['@tenure/protocol']));
  });

  test('package.json selects it under the "browser" condition', () => {
    const pkg = JSON.parse(readFileSync(join(src, '../package.json'), 'utf8'));
    expect(pkg.exports['.'].browser.default).toBe('./dist/browser.js');
    expect(pkg.exports['.'].default).toBe('./dist/index.js');
    // First, so that a resolver with the browser condition (esbuild, TypeScript's customConditions) takes it before "types".
    expect(Object.keys(pkg.exports['.'])[0]).toBe('browser');
  });

  // Node 20 has no global WebSocket (Node 22 does).
  test.skipIf(typeof (globalThis as { WebSocket?: unknown }).WebSocket !== 'undefined')(
    'without a global WebSocket it asks for one',
    () => {
      expect(() => webSocket('ws://a/zk')).toThrow(/no global WebSocket.*options\.WebSocket/);
    },
  );

  test('over a given WHATWG WebSocket constructor it talks to the server', async () => {
    await using server = createEmbeddedServer();
    const { url } = await server.listen({ webSocket: {} });
    const t = webSocket(url, { WebSocket });
    const r = await t.connect(
      url,
      { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 10_000, readOnly: false },
      { onEvent: () => undefined, onClose: () => undefined },
    );
    if (r.kind !== 'connected') throw new Error('expired');
    expect((await r.connection.send({ type: OpCode.exists, path: '/', watch: false })).err).toBe(0);
    r.connection.close();
  });
});
