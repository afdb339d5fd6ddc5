/** launchChromium: Debian's chromium, headless, with a temporary profile that close() removes. */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS, findChromium, launchChromium } from '../src/index.js';

describe.skipIf(findChromium() === null)('launchChromium', () => {
  it('runs a page headless with the shared flags, and removes its user-data-dir on close', async () => {
    const chromium = await launchChromium({ viewport: { width: 640, height: 480 } });
    expect(existsSync(chromium.userDataDir)).toBe(true);
    const page = await chromium.browser.newPage();
    await page.setContent('<p id="x">hello</p>');
    expect(await page.$eval('#x', (e) => e.textContent)).toBe('hello');
    expect(await page.evaluate(() => [window.innerWidth, window.innerHeight])).toEqual([640, 480]);
    const args = chromium.browser.process()?.spawnargs ?? [];
    for (const flag of CHROMIUM_FLAGS) expect(args).toContain(flag);
    await chromium.close();
    await chromium.close(); // twice is fine
    expect(existsSync(chromium.userDataDir)).toBe(false);
    expect(chromium.browser.connected).toBe(false);
  });
});
