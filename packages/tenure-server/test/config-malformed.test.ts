/**
 * Malformed zoo.cfg values that process-config.test.ts does not already cover: each is an error
 * naming the key (and the file and line), never a crash or a silent default.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { ConfigError } from '../src/config.js';
import { loadSettings } from '../src/main.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-cfg-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function cfg(text: string): string {
  const path = join(dir, `zoo${n++}.cfg`);
  writeFileSync(path, text, 'latin1');
  return path;
}

function configError(args: string[]): ConfigError {
  try {
    loadSettings(args);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(args)}`);
}

test.each([
  ['tickTime', 'tickTime\n', /:1: bad value for tickTime: "" is not a whole number/],
  ['tickTime', 'tickTime=0\n', /bad value for tickTime: 0 is out of range/],
  ['tickTime', 'tickTime=2000.5\n', /"2000.5" is not a whole number/],
  ['tickTime', 'tickTime=0x10\n', /"0x10" is not a whole number/],
  ['tickTime', 'tickTime=99999999999999999999\n', /out of range/],
  ['snapCount', 'snapCount=0\n', /bad value for snapCount: 0 is out of range/],
  ['preAllocSize', 'preAllocSize=0\n', /bad value for preAllocSize/],
  ['globalOutstandingLimit', 'globalOutstandingLimit=-1\n', /bad value for globalOutstandingLimit/],
  ['autopurge.purgeInterval', 'autopurge.purgeInterval=-1\n', /bad value for autopurge.purgeInterval/],
  ['autopurge.snapRetainCount', 'autopurge.snapRetainCount=many\n', /bad value for autopurge.snapRetainCount/],
  ['clientPort', 'clientPort=-1\n', /bad value for clientPort: -1 is out of range/],
  ['minSessionTimeout', 'minSessionTimeout=-5\n', /bad value for minSessionTimeout/],
  ['maxSessionTimeout', 'maxSessionTimeout=abc\n', /bad value for maxSessionTimeout/],
  ['znode.container.checkIntervalMs', 'znode.container.checkIntervalMs=0\n', /bad value for znode.container.checkIntervalMs/],
  ['metricsProvider.httpPort', 'metricsProvider.httpPort=99999\n', /bad value for metricsProvider.httpPort/],
  ['jute.maxbuffer', 'jute.maxbuffer=0\n', /bad value for jute.maxbuffer/],
  ['preAllocSize', 'tickTime=2000\n# a comment\n\npreAllocSize=lots\n', /:4: bad value for preAllocSize/],
])('%s: %j is an error naming the key, the file and the line', (key, text, message) => {
  const path = cfg(text);
  const err = configError(['--config', path]);
  expect(err.key).toBe(key);
  expect(err.message).toContain(path);
  expect(err.message).toMatch(message);
});

test('bytes that are not a key=value line are an unknown key (a warning), not a crash', () => {
  const { warnings, settings } = loadSettings(['--config', cfg('\u00ff\u00fe\u0000\u0001\ntickTime=100\n')]);
  expect(warnings).toEqual([expect.stringMatching(/:1: unknown key .*; ignored/)]);
  expect(settings.tickTime).toBe(100);
});

test('a config path that is a directory is an error naming it', () => {
  expect(configError(['--config', dir]).message).toMatch(new RegExp(`cannot read the config file ${dir}`));
});

test('the last of a repeated key wins, as in Java properties', () => {
  expect(loadSettings(['--config', cfg('tickTime=100\ntickTime=300\n')]).settings.tickTime).toBe(300);
});
