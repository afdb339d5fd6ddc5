/**
 * The page's election cards show observers (headless Chromium, as ui-page.slow.test.ts drives it):
 * a LeaderObserver's session under the election, the participants not; a server refusing `wchp`
 * gets a note saying observers are unknown.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, afterEach, describe, expect, it } from 'vitest';
import { findChromium, launchChromium, TestingEmbeddedServer, type ChromiumHandle } from '@tenure/testing';
import { sessionHex, startUi } from '../src/index.js';
import { electionWithObserver, openClient } from './observer-fixture.js';

const packageDir = fileURLToPath(new URL('../', import.meta.url));
const chromium = findChromium();

describe.skipIf(chromium === null)('tenure ui: observers on the election cards (Chromium)', () => {
  let browser: ChromiumHandle;
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
    execFileSync(process.execPath, [tsc, '-b', `${packageDir}page/tsconfig.json`], { stdio: 'inherit' });
    browser = await launchChromium({ viewport: { width: 1200, height: 800 } });
  });
  afterEach(async () => {
    for (const f of closers.splice(0).reverse()) await f().catch(() => {});
  });
  afterAll(() => browser?.close());

  async function pageOf(options: Parameters<typeof TestingEmbeddedServer.start>[0] = {}) {
    const server = await TestingEmbeddedServer.start(options);
    closers.push(() => server.close());
    const { observer } = await electionWithObserver(server.connectString, closers);
    const ui = await startUi({ client: await openClient(server.connectString, closers), connectString: server.connectString, port: 0 });
    closers.push(() => ui.close());
    const page = await browser.browser.newPage();
    closers.push(() => page.close());
    await page.goto(`${ui.url}#/elections`);
    await page.waitForSelector('[data-election="/election"] [data-participant]:nth-child(2)');
    return { page, observer };
  }

  it('lists the observer session under its election, and only it', async () => {
    const { page, observer } = await pageOf();
    const sid = sessionHex(observer.sessionId);
    await page.waitForSelector(`[data-election="/election"] [data-observer="${sid}"]`, { timeout: 10_000 });
    const shown = await page.$$eval('[data-election="/election"] [data-observer]', (els) =>
      els.map((e) => e.getAttribute('data-observer')),
    );
    expect(shown).toEqual([sid]);
  });

  it('a server refusing wchp: the card says observers are unknown', async () => {
    const { page } = await pageOf({ fourLetterWords: ['srvr', 'cons', 'dump'] });
    await page.waitForSelector('[data-election="/election"] [data-observers-unavailable]', { timeout: 10_000 });
    expect(await page.$$('[data-election="/election"] [data-observer]')).toHaveLength(0);
  });
});
