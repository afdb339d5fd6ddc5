/**
 * tenure-server's configuration: zoo.cfg parsing (Java properties), every key, warnings for
 * unknown keys, errors naming the key for bad values and ensemble keys, flags over the file,
 * --help listing every flag and key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, test } from 'vitest';
import { ConfigError, KEYS, defaultSettings, settingsFrom } from '../src/config.js';
import { helpText, parseCommandLine } from '../src/flags.js';
import { loadSettings, serverOptions } from '../src/main.js';
import { parseProperties } from '../src/properties.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-cfg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function cfg(text: string): string {
  const path = join(dir, `zoo${n++}.cfg`);
  writeFileSync(path, text);
  return path;
}

const configError = (f: () => unknown): ConfigError => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('no ConfigError was thrown');
};

describe('zoo.cfg', () => {
  test('a full ZooKeeper standalone config is read key by key', () => {
    const path = cfg(
      [
        '# a standalone ZooKeeper config',
        'tickTime=2000',
        'dataDir=/var/lib/zookeeper',
        'dataLogDir=/var/log/zookeeper-txn',
        'clientPort=2182',
        'clientPortAddress=127.0.0.1',
        'minSessionTimeout=4000',
        'maxSessionTimeout=60000',
        'maxClientCnxns=100',
        'globalOutstandingLimit=500',
        'snapCount=50000',
        'preAllocSize=16384',
        'forceSync=no',
        'autopurge.snapRetainCount=5',
        'autopurge.purgeInterval=24',
        '4lw.commands.whitelist=srvr, mntr ,ruok',
        'extendedTypesEnabled=true',
        'jute.maxbuffer=4194304',
        'metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider',
        'metricsProvider.httpPort=7001',
        'znode.container.checkIntervalMs=500',
      ].join('\n'),
    );
    const { settings, warnings } = loadSettings(['--config', path]);
    expect(warnings).toEqual([]);
    expect(settings).toMatchObject({
      tickTime: 2000,
      dataDir: '/var/lib/zookeeper',
      dataLogDir: '/var/log/zookeeper-txn',
      clientPort: 2182,
      clientPortAddress: '127.0.0.1',
      minSessionTimeout: 4000,
      maxSessionTimeout: 60000,
      maxClientCnxns: 100,
      globalOutstandingLimit: 500,
      snapCount: 50000,
      preAllocSize: 16384,
      forceSync: false,
      autopurge: { snapRetainCount: 5, purgeIntervalHours: 24 },
      fourLetterWords: ['srvr', 'mntr', 'ruok'],
      extendedTypesEnabled: true,
      juteMaxBuffer: 4194304,
      metricsPort: 7001,
      containerCheckIntervalMs: 500,
    });
    // …and reaches the server and its storage under their option names.
    expect(serverOptions(settings, undefined)).toMatchObject({
      tickMs: 2000,
      minSessionTimeoutMs: 4000,
      maxSessionTimeoutMs: 60000,
      maxBufferBytes: 4194304,
      ttlEnabled: true,
      maxClientCnxns: 100,
      globalOutstandingLimit: 500,
      fourLetterWords: ['srvr', 'mntr', 'ruok'],
      containerCheckIntervalMs: 500,
      dataDir: '/var/lib/zookeeper',
      dataLogDir: '/var/log/zookeeper-txn',
      snapCount: 50000,
      preAllocSize: 16384,
      forceSync: false,
      autopurge: { snapRetainCount: 5, purgeIntervalHours: 24 },
    });
  });

  test("ZooKeeper's defaults: in memory, port 2181, 60 connections per address, srvr only, no TTL nodes", () => {
    const { settings } = loadSettings([]);
    expect(settings).toEqual(defaultSettings());
    expect(settings).toMatchObject({
      clientPort: 2181,
      tickTime: 3000,
      maxClientCnxns: 60,
      globalOutstandingLimit: 1000,
      fourLetterWords: ['srvr'],
      extendedTypesEnabled: false,
      forceSync: true,
    });
    expect(serverOptions(settings, undefined)).toMatchObject({ minSessionTimeoutMs: 6000, maxSessionTimeoutMs: 60000 });
    expect(serverOptions(settings, undefined)).not.toHaveProperty('dataDir');
  });

  test('Java properties syntax: `=`, `:` and blank separators, comments, continuations, escapes', () => {
    const entries = parseProperties('# c\n! c\n  tickTime = 100\nclientPort:2183\nsnapCount 7\ndataDir=/a/\\\n   b\nkey\\=x=v\\u0041\n\n');
    expect(entries).toEqual([
      { key: 'tickTime', value: '100', line: 3 },
      { key: 'clientPort', value: '2183', line: 4 },
      { key: 'snapCount', value: '7', line: 5 },
      { key: 'dataDir', value: '/a/b', line: 6 },
      { key: 'key=x', value: 'vA', line: 8 },
    ]);
  });

  test('an unknown key is a warning naming the file, the line and the key; the rest is applied', () => {
    const { settings, warnings } = loadSettings(['--config', cfg('tickTime=100\nfancyFeature=on\nadmin.serverPort=8080\n')]);
    expect(settings.tickTime).toBe(100);
    expect(warnings).toEqual([
      expect.stringMatching(/zoo\d+\.cfg:2: unknown key fancyFeature; ignored/),
      expect.stringMatching(/:3: admin\.serverPort is not served by tenure-server/),
    ]);
  });

  test.each([
    ['tickTime=fast', 'tickTime', /:1: bad value for tickTime: "fast" is not a whole number/],
    ['clientPort=70000', 'clientPort', /bad value for clientPort: 70000 is out of range/],
    ['forceSync=maybe', 'forceSync', /bad value for forceSync: "maybe" is not yes\/no/],
    ['maxClientCnxns=-1', 'maxClientCnxns', /bad value for maxClientCnxns/],
    ['4lw.commands.whitelist=srvr,hack', '4lw.commands.whitelist', /"hack" not a four-letter word/],
    ['extendedTypesEnabled=1', 'extendedTypesEnabled', /bad value for extendedTypesEnabled/],
    ['jute.maxbuffer=1MB', 'jute.maxbuffer', /bad value for jute.maxbuffer/],
    ['dataDir=', 'dataDir', /bad value for dataDir: is empty/],
    [
      'metricsProvider.className=com.example.Other',
      'metricsProvider.className',
      /only org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider/,
    ],
    [
      'minSessionTimeout=9000\nmaxSessionTimeout=4000',
      'minSessionTimeout',
      /minSessionTimeout \(9000\) must not be larger than maxSessionTimeout \(4000\)/,
    ],
    ['dataLogDir=/x', 'dataLogDir', /dataLogDir is set without dataDir/],
  ])('a bad value is an error that names the key: %s', (text, key, message) => {
    const err = configError(() => loadSettings(['--config', cfg(text)]));
    expect(err.key).toBe(key);
    expect(err.message).toMatch(message);
  });

  test.each(['server.1=zk1:2888:3888', 'initLimit=10', 'syncLimit=5', 'group.1=1:2', 'dynamicConfigFile=/x'])(
    'an ensemble key is an error explaining standalone: %s',
    (line) => {
      const err = configError(() => loadSettings(['--config', cfg(`tickTime=2000\n${line}\n`)]));
      expect(err.key).toBe(line.split('=')[0]);
      expect(err.message).toMatch(/:2: .* is an ensemble setting; tenure-server is a standalone server.*ZooKeeper ensemble/);
    },
  );

  test('TLS keys: a bad value names its key; secureClientPort without a key store is an error', () => {
    expect(configError(() => loadSettings(['--config', cfg('secureClientPort=2281\n')])).message).toMatch(
      /secureClientPort needs ssl\.keyStore\.location/,
    );
    expect(configError(() => loadSettings(['--config', cfg('ssl.clientAuth=maybe\n')])).key).toBe('ssl.clientAuth');
    expect(configError(() => loadSettings(['--config', cfg('secureClientPort=x\n')])).message).toMatch(/bad value for secureClientPort/);
  });

  test('autopurge.snapRetainCount below 3 is raised to 3 with a warning, as ZooKeeper does', () => {
    const { settings, warnings } = loadSettings(['--config', cfg('autopurge.snapRetainCount=1\n')]);
    expect(settings.autopurge.snapRetainCount).toBe(3);
    expect(warnings).toEqual([expect.stringMatching(/autopurge.snapRetainCount 1 is below the minimum; using 3/)]);
  });

  test('a config file that cannot be read is an error naming it', () => {
    expect(configError(() => loadSettings(['--config', join(dir, 'missing.cfg')])).message).toMatch(
      /cannot read the config file .*missing\.cfg/,
    );
  });
});

describe('flags', () => {
  test('flags override the file, in either `--flag value` or `--flag=value` form', () => {
    const path = cfg('clientPort=2182\ntickTime=2000\ndataDir=/from/file\nforceSync=yes\n');
    const { settings } = loadSettings([
      '--config',
      path,
      '--port',
      '3000',
      '--tick-time=250',
      '--data-dir',
      '/from/flag',
      '--force-sync=no',
      '--log-level',
      'debug',
      '--metrics-port',
      '0',
    ]);
    expect(settings).toMatchObject({
      clientPort: 3000,
      tickTime: 250,
      dataDir: '/from/flag',
      forceSync: false,
      logLevel: 'debug',
      metricsPort: 0,
    });
  });

  test('zkServer.sh style: the config file as a bare argument', () => {
    expect(loadSettings([cfg('clientPort=2190\n')]).settings.clientPort).toBe(2190);
  });

  test('a bad flag value names the flag and its key; unknown flags and missing values are errors', () => {
    expect(configError(() => loadSettings(['--port', 'x'])).message).toMatch(/--port: bad value for clientPort/);
    expect(configError(() => parseCommandLine(['--prot', '1'])).message).toMatch(/unknown flag --prot/);
    expect(configError(() => parseCommandLine(['--port'])).message).toMatch(/--port needs a value/);
    expect(configError(() => parseCommandLine(['--log-level', 'loud'])).message).toMatch(/--log-level: "loud" is not one of/);
  });

  test('--help lists every flag and every zoo.cfg key', () => {
    const help = helpText();
    for (const k of KEYS) {
      if (k.flag !== undefined) expect(help).toContain(`--${k.flag} <${k.arg}>`);
      expect(help).toContain(k.key);
    }
    for (const own of ['--config', '--log-level', '--help', '--version']) expect(help).toContain(own);
    expect(parseCommandLine(['--help']).help).toBe(true);
  });

  test('settingsFrom without a file or flags is the defaults', () => {
    expect(settingsFrom(undefined, []).settings).toEqual(defaultSettings());
  });
});

test("the README's configuration table has every key and flag", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('\n## Configuration\n');
  expect(start).toBeGreaterThan(-1);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  for (const k of KEYS) {
    expect(section).toContain(`\`${k.key}\``);
    if (k.flag !== undefined) expect(section).toContain(`\`--${k.flag}\``);
  }
});
