/**
 * Headless Chromium for browser tests: Debian's `chromium` package driven by `puppeteer-core`
 * (which never downloads a browser). Each launch gets a fresh user-data-dir in the temp folder,
 * removed again on close, and the flags that keep a headless browser quiet on a shared machine
 * (no GPU, no QUIC, no background networking, no component updates, no sync).
 *
 * `puppeteer-core` is loaded only when a browser is launched, so importing @tenure/testing costs
 * nothing for the suites that never start one.
 */
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, LaunchOptions } from 'puppeteer-core';
import { TenureError } from '@tenure/protocol';

/** Where Debian (and most distributions) install Chromium. */
const CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The flags every test browser runs with. */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Thrown when no Chromium executable is installed; the message names the apt package. */
export class ChromiumUnavailableError extends TenureError {
  override name = 'ChromiumUnavailableError';
  constructor(message = 'no Chromium is installed') {
    super('CHROMIUM_UNAVAILABLE', message);
  }
}

/** The Chromium executable: `$CHROMIUM_PATH`, else Debian's; null when none is installed. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = env.CHROMIUM_PATH ? [env.CHROMIUM_PATH, ...CHROMIUM_PATHS] : CHROMIUM_PATHS;
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // try the next one
    }
  }
  return null;
}

export interface LaunchChromiumOptions {
  /** Flags added after {@link CHROMIUM_FLAGS}. */
  args?: string[];
  /** The default page size (puppeteer's `defaultViewport`); 1280×800 unless given. */
  viewport?: { width: number; height: number; deviceScaleFactor?: number };
  /** Longest the browser may take to start (ms); 30 s unless given. */
  timeoutMs?: number;
  /** Any other puppeteer launch option (executablePath, args and userDataDir are set here). */
  launch?: Omit<LaunchOptions, 'executablePath' | 'args' | 'userDataDir' | 'defaultViewport'>;
}

/** A running headless Chromium; close() ends it and removes its user-data-dir. */
export interface ChromiumHandle {
  readonly browser: Browser;
  /** The temporary profile folder (gone after close()). */
  readonly userDataDir: string;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts headless Chromium with a fresh temporary profile.
 *
 * ```ts
 * await using chromium = await launchChromium();
 * const page = await chromium.browser.newPage();
 * ```
 * @throws ChromiumUnavailableError when Chromium is not installed (`apt-get install chromium`).
 */
export async function launchChromium(options: LaunchChromiumOptions = {}): Promise<ChromiumHandle> {
  const executablePath = findChromium();
  if (executablePath === null) {
    throw new ChromiumUnavailableError(`no Chromium at ${CHROMIUM_PATHS.join(' or ')}: install Debian's "chromium" package`);
  }
  const { launch } = await import('puppeteer-core');
  const userDataDir = await mkdtemp(join(tmpdir(), 'tenure-chromium-'));
  let browser: Browser;
  try {
    browser = await launch({
      ...options.launch,
      executablePath,
      headless: true,
      userDataDir,
      args: [...CHROMIUM_FLAGS, ...(options.args ?? [])],
      defaultViewport: options.viewport ?? { width: 1280, height: 800 },
      timeout: options.timeoutMs ?? 30_000,
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      try {
        await browser.close();
      } finally {
        // Chromium may still be writing its profile for a moment after the process ends.
        await rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      }
    })());
  return { browser, userDataDir, close, [Symbol.asyncDispose]: close };
}
