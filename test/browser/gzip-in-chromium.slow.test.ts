/**
 * The browser entry's gzip() in headless Chromium: CompressionStream / DecompressionStream
 * ('deflate-raw') inside Curator's gzip member. The page (bundled for the browser, so node:zlib is
 * out of it) writes Curator's header and members Node's gzip() reads; it reads Node's members
 * and `gzip` the tool's; bad data (including bytes after the member, which Chromium's
 * DecompressionStream refuses) is a DecompressionError with its code and path.
 */
import { gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { gzip } from '@tenure/client';
import { launchChromium, type ChromiumHandle } from '@tenure/testing';
import { bundleForBrowser, repoRoot } from './bundle.js';

/** What the page exposes on globalThis: hex in, hex (or the error's fields) out. */
interface PageGzip {
  compress(hex: string): Promise<string>;
  decompress(hex: string, path: string): Promise<string | { name: string; code: string; path: string }>;
}
declare const tenureGzip: PageGzip;

const PAGE = `
import { gzip, DecompressionError } from '@tenure/client';
const provider = gzip();
const hex = (b) => Buffer.from(b).toString('hex');
globalThis.tenureGzip = {
  compress: async (h) => hex(await provider.compress(Buffer.from(h, 'hex'), '/p')),
  decompress: async (h, path) => {
    try {
      return hex(await provider.decompress(Buffer.from(h, 'hex'), path));
    } catch (e) {
      if (!(e instanceof DecompressionError)) throw e;
      return { name: e.name, code: e.code, path: e.path };
    }
  },
};
`;

const PAYLOADS = [
  Buffer.from('x'),
  Buffer.from(JSON.stringify({ replicas: Array.from({ length: 40 }, (_, i) => ({ host: `10.0.0.${i}`, state: 'active' })) })),
  randomBytes(4000),
  Buffer.alloc(200_000, 'abc'),
];

describe('gzip() in Chromium (the browser entry, on CompressionStream)', () => {
  let chromium: ChromiumHandle;
  let code: string;

  beforeAll(async () => {
    const bundle = await bundleForBrowser(PAGE, { inject: [`${repoRoot}test/browser/page/buffer-shim.ts`] });
    expect(bundle.forbidden).toEqual([]);
    expect(bundle.inputs).toContain('packages/client/src/gzip-streams.ts');
    expect(bundle.inputs).not.toContain('packages/client/src/gzip-zlib.ts');
    code = bundle.code;
    chromium = await launchChromium();
  });
  afterAll(async () => {
    await chromium?.close();
  });

  test("round trips: Node reads the browser's members and the browser reads Node's and gzip the tool's", async () => {
    const page = await chromium.browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(String(err)));
    await page.goto('about:blank');
    await page.addScriptTag({ content: code, type: 'module' });
    await page.waitForFunction(() => typeof (globalThis as { tenureGzip?: unknown }).tenureGzip === 'object');
    const node = gzip();
    for (const data of PAYLOADS) {
      const inBrowser = Buffer.from(await page.evaluate((h) => tenureGzip.compress(h), data.toString('hex')), 'hex');
      expect([...inBrowser.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
      expect(Buffer.from(await node.decompress(inBrowser, '/p')).equals(data)).toBe(true);
      // The DEFLATE bytes are Chromium's zlib's: equal to Node's where the two versions match alike.
      for (const member of [inBrowser, gzipSync(data)]) {
        expect(await page.evaluate((h) => tenureGzip.decompress(h, '/p'), member.toString('hex'))).toBe(data.toString('hex'));
      }
    }
    const good = Buffer.from(await node.compress(PAYLOADS[1]!, '/p'));
    for (const bad of [Buffer.from('plain'), good.subarray(0, good.length - 12), Buffer.concat([good, good])]) {
      expect(await page.evaluate((h) => tenureGzip.decompress(h, '/bad'), bad.toString('hex'))).toEqual({
        name: 'DecompressionError',
        code: 'BAD_COMPRESSED_DATA',
        path: '/bad',
      });
    }
    expect(problems).toEqual([]);
    await page.close();
  });
});
