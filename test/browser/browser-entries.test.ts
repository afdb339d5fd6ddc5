/**
 * The browser entries carry no Node built-in: each package a browser needs is bundled with esbuild
 * for platform 'browser' (so the "browser" export conditions are chosen, as an application's
 * bundler chooses them), and any `node:` import, bare built-in or `ws` fails the test with the
 * module that made it. The bundles must also leave @tenure/zookeeper (TCP) out.
 */
import { describe, expect, test } from 'vitest';
import { bundleForBrowser, readmeSnippet, repoRoot } from './bundle.js';

/**
 * Everything a browser needs for a client over WebSocket, and the recipes over that client; not
 * @tenure/discovery, whose service instances read the host's addresses (node:os).
 */
const PACKAGES = ['protocol', 'client', 'ws', 'locks', 'nodes', 'cache', 'group', 'leader', 'barriers', 'counters', 'queues'];

describe('browser entries bundle without Node built-ins', () => {
  test.each(PACKAGES)('@tenure/%s', async (name) => {
    const bundle = await bundleForBrowser(`export * from '@tenure/${name}';`);
    expect(bundle.forbidden).toEqual([]);
    expect(bundle.nodeGlobals).toEqual([]);
    expect(bundle.inputs.filter((f) => f.includes('packages/zookeeper/') || f.includes('packages/server/'))).toEqual([]);
    expect(bundle.code.length).toBeGreaterThan(0);
  });

  test('the client and ws bundles take their browser entries', async () => {
    const bundle = await bundleForBrowser(`export { createClient } from '@tenure/client'; export { webSocket } from '@tenure/ws';`);
    expect(bundle.inputs).toContain('packages/client/src/browser.ts');
    expect(bundle.inputs).toContain('packages/ws/src/browser.ts');
    expect(bundle.inputs).not.toContain('packages/client/src/create-client.ts');
  });

  test('the checks catch a node: import and a Node-only global (they are not vacuous)', async () => {
    const bundle = await bundleForBrowser(`export * from '@tenure/zookeeper';`);
    expect(bundle.forbidden.map((f) => f.specifier)).toContain('node:net');
    const globals = await bundleForBrowser(
      `export const later = (fn: () => void) => setImmediate(fn); export const p = globalThis.process;`,
    );
    expect(globals.nodeGlobals.map((g) => g.split(':')[0])).toEqual(['setImmediate']);
  });

  test("the client README's browser snippet bundles (the Chromium test runs it)", async () => {
    const bundle = await bundleForBrowser(readmeSnippet(), { inject: [`${repoRoot}test/browser/page/buffer-shim.ts`] });
    expect(bundle.forbidden).toEqual([]);
    expect(bundle.inputs.some((f) => f.includes('node_modules/buffer/'))).toBe(true);
  });
});
