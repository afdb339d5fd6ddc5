/**
 * `tenure ui` in headless Chromium, kazoo's recipes: the Partitions view shows each item with the
 * member holding it (and follows a re-split live, without reload), the Leases view a timed lease's
 * holder and time left. Screenshots go to packages/cli/test-output/ui/ (docs/ with
 * UPDATE_UI_SCREENSHOTS=1).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RetryPolicies, type Client } from '@tenure/client';
import { SetPartitioner, kazooPartition } from '@tenure/group';
import { NonBlockingLease } from '@tenure/locks';
import { findChromium, launchChromium, TestingEmbeddedServer, type ChromiumHandle } from '@tenure/testing';
import { startUi, type UiServer } from '../src/index.js';

const packageDir = fileURLToPath(new URL('../', import.meta.url));
const outDir = `${packageDir}test-output/ui/`;
const chromium = findChromium();
const ITEMS = ['orders-0', 'orders-1', 'orders-2', 'orders-3', 'orders-4', 'orders-5'];

function buildPage(): void {
  const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
  execFileSync(process.execPath, [tsc, '-b', `${packageDir}page/tsconfig.json`], { stdio: 'inherit' });
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const file = `${outDir}${name}.png`;
  await page.screenshot({ path: file as `${string}.png`, fullPage: true });
  if (process.env.UPDATE_UI_SCREENSHOTS === '1') copyFileSync(file, `${packageDir}docs/ui-${name}.png`);
}

/** item → the holder the page shows ('' when free). */
function shownHolders(page: Page): Promise<Record<string, string>> {
  return page.$$eval('[data-partition] [data-item]', (els) =>
    Object.fromEntries(els.map((e) => [e.getAttribute('data-item') ?? '', e.getAttribute('data-holder') ?? ''])),
  );
}

describe.skipIf(chromium === null)("tenure ui in headless Chromium: kazoo's recipes", () => {
  let server: TestingEmbeddedServer;
  let browser: ChromiumHandle;
  const clients: Client[] = [];
  const partitioners: SetPartitioner[] = [];

  async function open(): Promise<Client> {
    const c = createClient({
      connectString: server.connectString,
      sessionTimeoutMs: 5000,
      retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200),
    });
    clients.push(c);
    await c.start();
    return c;
  }

  beforeAll(async () => {
    buildPage();
    server = await TestingEmbeddedServer.start();
    browser = await launchChromium({ viewport: { width: 1360, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all(partitioners.map((p) => p.close()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await server?.close();
  });

  async function acquiredSplit(ps: readonly SetPartitioner[]): Promise<void> {
    const ids = ps.map((p) => p.identifier);
    for (;;) {
      await Promise.all(ps.map((p) => p.waitForAcquire({ timeoutMs: 20_000 })));
      if (
        ps.every((p) => p.allocation === 'acquired' && JSON.stringify(p.items) === JSON.stringify(kazooPartition(p.identifier, ids, ITEMS)))
      )
        return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('shows item → holder, follows a re-split live, and shows a timed lease with its holder and time left', async () => {
    const make = async (id: string): Promise<SetPartitioner> => {
      const p = new SetPartitioner(await open(), '/work/orders', ITEMS, { identifier: id, timeBoundaryMs: 100 });
      partitioners.push(p);
      await p.start();
      return p;
    };
    const a = await make('worker-a');
    const b = await make('worker-b');
    await acquiredSplit([a, b]);
    const lease = await NonBlockingLease.obtain(await open(), '/cron/nightly', 3_600_000, { identifier: 'host-1' });
    expect(lease.obtained).toBe(true);

    await using ui: UiServer = await startUi({ client: await open(), connectString: server.connectString, port: 0 });
    const page = await browser.browser.newPage();
    await page.goto(`${ui.url}#/partitions`);
    await page.waitForSelector('[data-partition="/work/orders"] [data-item]');
    const expected = (ids: string[]): Record<string, string> =>
      Object.fromEntries(ITEMS.map((item) => [item, ids.find((id) => kazooPartition(id, ids, ITEMS).includes(item))!]));
    await page.waitForFunction(
      (want: string) => {
        const got = Object.fromEntries(
          [...document.querySelectorAll('[data-partition] [data-item]')].map((e) => [
            e.getAttribute('data-item'),
            e.getAttribute('data-holder'),
          ]),
        );
        return JSON.stringify(got) === want;
      },
      { timeout: 10_000, polling: 'mutation' },
      JSON.stringify(expected(['worker-a', 'worker-b'])),
    );
    await screenshot(page, 'partitions');

    // A third member: the page follows the re-split without reload.
    const c = await make('worker-c');
    await acquiredSplit([a, b, c]);
    await page.waitForFunction(
      (want: string) => {
        const got = Object.fromEntries(
          [...document.querySelectorAll('[data-partition] [data-item]')].map((e) => [
            e.getAttribute('data-item'),
            e.getAttribute('data-holder'),
          ]),
        );
        return JSON.stringify(got) === want;
      },
      { timeout: 10_000, polling: 'mutation' },
      JSON.stringify(expected(['worker-a', 'worker-b', 'worker-c'])),
    );
    expect(await shownHolders(page)).toEqual(expected(['worker-a', 'worker-b', 'worker-c']));

    await page.goto(`${ui.url}#/leases`);
    await page.waitForSelector('[data-lease="/cron/nightly"]');
    const card = await page.$eval('[data-lease="/cron/nightly"]', (e) => ({
      holder: e.getAttribute('data-holder'),
      running: e.getAttribute('data-running'),
      text: e.textContent ?? '',
    }));
    expect(card.holder).toBe('host-1');
    expect(card.running).toBe('true');
    expect(card.text).toMatch(/(59 min \d+ s|1 h 0 min) left/);
    await screenshot(page, 'leases');
    await page.close();
  });
});
