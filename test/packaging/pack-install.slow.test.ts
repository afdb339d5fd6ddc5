/**
 * Packages as users install them. Every workspace package is packed (`npm pack`, from a built
 * dist), then each one is installed alone into an empty app from its tarball and the tarballs of its
 * @tenure/* dependency closure; third-party dependencies come from the registry or npm's cache.
 * There the package is imported (ESM) and required (CommonJS: Node 20.19+ requires an ES module
 * without top-level await, `process.features.require_module`, which is what `engines` asks for), and
 * its README's first ```ts snippet runs with its types stripped (esbuild), once as an .mjs and once
 * as a .cjs whose imports are require() calls.
 *
 * Several first snippets are fragments that take a `client` (or a `socket`, a `signal`, a `log`, a
 * `connectString`) as given: the case's `prelude` binds those names, to a client of the embedded
 * server in-process or on its TCP listener (@tenure/server installed beside, as an app that runs the
 * snippet would), and its `during` code ends the snippets that loop for ever. @tenure/testing's
 * snippet starts Debian's ZooKeeper: skipped without it locally, a failure with CI=true.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TenureServerProcess, realZooKeeper } from '@tenure/testing';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'tenure-pack-'));
const tarballs = join(work, 'tarballs');
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  bin?: Record<string, string>;
}
const manifests = new Map<string, Manifest>(); // by directory under packages/
for (const dir of readdirSync(join(ROOT, 'packages'))) {
  try {
    manifests.set(dir, JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) as Manifest);
  } catch {
    // not a package
  }
}
const dirOf = new Map([...manifests].map(([dir, m]) => [m.name, dir]));
/** npm pack's file name: @tenure/x@1.2.3 → tenure-x-1.2.3.tgz. */
const tarballOf = (dir: string): string => {
  const m = manifests.get(dir)!;
  return join(tarballs, `${m.name.replace('@', '').replace('/', '-')}-${m.version}.tgz`);
};

/** `dirs` and every @tenure/* package they depend on (dependencies, not devDependencies). */
function closure(dirs: readonly string[]): string[] {
  const out = new Set<string>();
  const visit = (dir: string): void => {
    if (out.has(dir)) return;
    out.add(dir);
    for (const dep of Object.keys(manifests.get(dir)!.dependencies ?? {})) {
      const d = dirOf.get(dep);
      if (d !== undefined) visit(d);
    }
  };
  dirs.forEach(visit);
  return [...out].sort();
}

/** npm without the variables `npm run` exports, which would point the app's npm at this workspace. */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));

function run(command: string, args: string[], cwd: string, timeout = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A client on an embedded server, as the fragments take `client` (names prefixed so a snippet's imports do not clash). */
const CLIENT = `
import { createEmbeddedServer as __createServer } from '@tenure/server';
import { createClient as __createClient } from '@tenure/client';
const __server = __createServer();
const client = __createClient({ transport: __server.transport(), sessionTimeoutMs: 10_000 });
await client.start();
const __sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
`;
const CLOSE_CLIENT = 'await client.close();\nawait __server.close();';

interface Case {
  /** Directory under packages/. */
  pkg: string;
  /** Packages the snippet or its prelude imports besides the package (their closures are installed too). */
  extra?: string[];
  /** Third-party packages the snippet imports (from the registry or npm's cache), e.g. a schema library. */
  registry?: string[];
  /** Before the snippet, at the top level: binds the names it takes as given. */
  prelude?: string;
  /** First in the snippet's block (so it sees the snippet's names): ends snippets that loop for ever. */
  during?: string;
  /** After the snippet's block. */
  postlude?: string;
  /** What the snippet prints. */
  stdout: RegExp;
  /** The snippet runs a real ZooKeeper (Debian's `zookeeper`). */
  zookeeper?: true;
}

const CASES: Case[] = [
  {
    pkg: 'nodes',
    extra: ['server'],
    prelude: `${CLIENT}const log = { info() {}, warn() {} };`,
    postlude: CLOSE_CLIENT,
    stdout: /^\/services\/api\/_c_[0-9a-f-]+-instance-\d{10}\n$/,
  },
  {
    pkg: 'cache',
    extra: ['server'],
    prelude: `${CLIENT}await client.create('/config', null);\nawait client.create('/config/db', Buffer.from('db'));\nconst reload = (_path: string, _data: unknown) => {};`,
    // Delete a node once it is cached (the loop prints it), then close the cache, which ends the loop.
    during: `setTimeout(async () => {
  while (cache.get('/config/db') === undefined) await __sleep(20);
  await __sleep(100);
  await client.delete('/config/db');
  await __sleep(500);
  await cache.close();
}, 0);`,
    postlude: CLOSE_CLIENT,
    stdout: /^gone \/config\/db\n$/,
  },
  {
    pkg: 'group',
    extra: ['server'],
    prelude: `${CLIENT}const rebalance = (_ids: string[]) => {};\nconst log = console;`,
    during: 'setTimeout(() => void member.close(), 1000);',
    postlude: CLOSE_CLIENT,
    stdout: /^$/,
  },
  {
    pkg: 'locks',
    extra: ['server'],
    prelude: `${CLIENT}const signal = new AbortController().signal;\nconst writeOrders = async (_o: unknown) => {};`,
    postlude: CLOSE_CLIENT,
    stdout: /^$/,
  },
  {
    pkg: 'leader',
    extra: ['server'],
    prelude: `${CLIENT}const signal = new AbortController().signal;\nconst startWork = (_token: bigint, _signal: AbortSignal) => {};\nconst log = console;`,
    postlude: CLOSE_CLIENT,
    stdout: /^(no longer leading:.*\n)?$/,
  },
  { pkg: 'barriers', extra: ['server'], stdout: /^([abc] is working\n){3}all done\n$/ },
  { pkg: 'counters', extra: ['server'], stdout: /^true 0n 1n\nmax-workers is now 4 at version 0\n/ },
  {
    pkg: 'models',
    extra: ['server'],
    registry: ['zod@^4.6.7'],
    stdout: /^\{ name: 'Alice', age: 31, roles: \[\] \} 0\nMODEL_VALIDATION 2\n32\n$/,
  },
  { pkg: 'queues', extra: ['server'], stdout: /working on resize photo 42\n/ },
  { pkg: 'discovery', extra: ['server'], stdout: /^http:\/\/[\d.]*:8080\n$/ }, // no address on a host without a non-loopback IPv4
  {
    pkg: 'client',
    extra: ['server'],
    prelude: `import { createEmbeddedServer as __createServer } from '@tenure/server';\nconst server = __createServer();\nconst logger = undefined;`,
    postlude: 'await server.close();',
    stdout: /connected/i,
  },
  { pkg: 'server', stdout: /^$/ },
  { pkg: 'tenure-server', stdout: /^127\.0\.0\.1:\d+\n$/ },
  { pkg: 'ws', extra: ['server', 'client'], stdout: /^over WebSocket\n$/ },
  {
    pkg: 'etcd',
    extra: ['client', 'testing'],
    prelude: `import { TestingEtcd as __TestingEtcd } from '@tenure/testing';\nconst __etcd = await __TestingEtcd.start();\nconst endpoint = __etcd.endpoint;`,
    postlude: 'await __etcd.close();',
    stdout: /^from etcd\n$/,
  },
  { pkg: 'zookeeper', extra: ['client'], stdout: /^$/ },
  {
    pkg: 'protocol',
    extra: ['server'],
    // A raw socket to the embedded server's TCP listener; the snippet's handler runs until it is closed.
    prelude: `import { createEmbeddedServer as __createServer } from '@tenure/server';
import { connect as __connect } from 'node:net';
const __server = __createServer();
const __address = await __server.listen({ port: 0, host: '127.0.0.1' });
const socket = __connect(__address.port, '127.0.0.1');
const fifo = [{ type: 4 }];
const onEvent = (_e: unknown, _zxid: bigint) => {};
setTimeout(() => { socket.destroy(); void __server.close(); }, 500);`,
    stdout: /^$/,
  },
  {
    pkg: 'cli',
    extra: ['server'],
    // A client on the embedded server's TCP listener, whose four-letter words inspectSessions asks;
    // a lock and a latch node (Curator's protected names) give the report content.
    prelude: `import { createEmbeddedServer as __createServer } from '@tenure/server';
import { createClient as __createClient, CreateMode as __CreateMode } from '@tenure/client';
const __server = __createServer();
const __address = await __server.listen({ port: 0, host: '127.0.0.1' });
const connectString = \`127.0.0.1:\${__address.port}\`;
const client = __createClient({ connectString, sessionTimeoutMs: 10_000 });
await client.start();
const __recipe = { mode: __CreateMode.EPHEMERAL_SEQUENTIAL, protection: true, createParents: true } as const;
await client.create('/locks/orders/lock-', Buffer.from('holder-A'), __recipe);
await client.create('/election/latch-', Buffer.from('alpha'), __recipe);`,
    postlude: CLOSE_CLIENT,
    // The lock, the latch, the lock again as a LeaderSelector's election, and the client's session with both nodes.
    stdout: new RegExp(
      [
        String.raw`^/locks/orders holder-A \d+ \[\]`,
        '/election leader-latch alpha 1',
        '/locks/orders leader-selector holder-A 1',
        String.raw`0x[0-9a-f]+ 127\.0\.0\.1:\d+ /election/_c_[0-9a-f-]{36}-latch-0000000000 /locks/orders/_c_[0-9a-f-]{36}-lock-0000000000\n$`,
      ].join('\n'),
    ),
  },
  { pkg: 'testing', extra: ['client'], zookeeper: true, stdout: /^hello\n$/ },
  // Registration alone: no SDK is installed with it, so the API's no-op providers stand in.
  { pkg: 'otel', stdout: /^$/ },
];

/** The imports of a TS source (at line starts, possibly over several lines) and the rest. */
function splitImports(source: string): { imports: string[]; body: string } {
  const imports: string[] = [];
  const body = source.replace(/^import\s[\s\S]*?\sfrom\s+['"][^'"]+['"];?[ \t]*$/gm, (m) => {
    imports.push(m);
    return '';
  });
  return { imports, body };
}

/** `import { a, b as c } from 'x'` → `const { a, b: c } = require('x')` (and `* as n`, default). */
function toRequire(statement: string): string {
  const m = /^import\s+([\s\S]*?)\s+from\s+(['"][^'"]+['"])/.exec(statement)!;
  const [clause, from] = [m[1]!.trim(), m[2]!];
  if (clause.startsWith('type ')) return '';
  if (clause.startsWith('* as ')) return `const ${clause.slice(5)} = require(${from});`;
  if (clause.startsWith('{')) {
    const names = clause
      .slice(1, -1)
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '' && !n.startsWith('type '))
      .map((n) => n.replace(/\s+as\s+/, ': '));
    return `const { ${names.join(', ')} } = require(${from});`;
  }
  return `const ${clause} = require(${from}).default;`;
}

function firstSnippet(pkg: string): string {
  const readme = readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8');
  return /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
}

/** The snippet as an ES module and as a CommonJS script, types stripped. */
function programs(c: Case): { mjs: string; cjs: string } {
  const pre = splitImports(c.prelude ?? '');
  const snip = splitImports(firstSnippet(c.pkg));
  const imports = [...pre.imports, ...snip.imports];
  const body = `${pre.body}\n{\n${c.during ?? ''}\n${snip.body}\n}\n${c.postlude ?? ''}\n`;
  const strip = (ts: string, format?: 'esm'): string =>
    transformSync(ts, { loader: 'ts', target: 'node20', ...(format === undefined ? {} : { format }) }).code;
  const mjs = strip(`${imports.join('\n')}\n${body}`, 'esm');
  const cjs = strip(
    `${imports.map(toRequire).join('\n')}\n(async () => {\n${body}\n})().catch((err) => {\n  console.error(err);\n  process.exitCode = 1;\n});\n`,
  );
  return { mjs, cjs };
}

beforeAll(() => {
  // Pack what the sources build to (incremental: a no-op when dist is current).
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: ROOT, stdio: 'inherit' });
  mkdirSync(tarballs);
  const workspaces = [...manifests].filter(([, m]) => m.private !== true).flatMap(([dir]) => ['-w', `packages/${dir}`]);
  execFileSync('npm', ['pack', ...workspaces, '--pack-destination', tarballs, '--silent'], { cwd: ROOT, env, stdio: 'ignore' });
}, 300_000);

test('every package is covered and packs with its LICENSE, dist and repository', () => {
  expect(CASES.map((c) => c.pkg).sort()).toEqual([...manifests.keys()].sort());
  const packed = readdirSync(tarballs).sort();
  expect(packed).toEqual([...manifests.keys()].map((d) => tarballOf(d).slice(tarballs.length + 1)).sort());
  for (const [dir, m] of manifests) {
    const files = execFileSync('tar', ['-tzf', tarballOf(dir)], { encoding: 'utf8' }).split('\n');
    expect(files, m.name).toEqual(
      expect.arrayContaining(['package/LICENSE', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts']),
    );
    const json = JSON.parse(execFileSync('tar', ['-xzOf', tarballOf(dir), 'package/package.json'], { encoding: 'utf8' })) as Record<
      string,
      unknown
    >;
    expect(json, m.name).toMatchObject({
      license: 'Apache-2.0',
      engines: { node: '>=20.19' },
      types: './dist/index.d.ts',
      repository: { type: 'git', url: 'git+https://github.com/tenure-dev/tenure.git', directory: `packages/${dir}` },
    });
  }
});

describe.each(CASES)('$pkg, installed alone', (c) => {
  const app = join(work, `app-${c.pkg}`);
  const installed = closure([c.pkg, ...(c.extra ?? [])]);

  beforeAll(async () => {
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `app-${c.pkg}`, private: true }));
    const npm = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...installed.map(tarballOf), ...(c.registry ?? [])],
      app,
      240_000,
    );
    expect(npm.code, npm.stderr).toBe(0);
  }, 300_000);

  test('only its @tenure/* closure is there', () => {
    const scope = readdirSync(join(app, 'node_modules/@tenure')).sort();
    expect(scope).toEqual(installed.map((d) => manifests.get(d)!.name.slice('@tenure/'.length)).sort());
    // The process's logger and metrics come with @tenure/tenure-server only, never with @tenure/server.
    for (const dep of ['pino', 'prom-client']) expect(existsSync(join(app, 'node_modules', dep)), dep).toBe(c.pkg === 'tenure-server');
  });

  test('it imports and requires without running anything', async () => {
    const name = manifests.get(c.pkg)!.name;
    writeFileSync(join(app, 'load.mjs'), `const m = await import('${name}');\nconsole.log(Object.keys(m).length > 0);\n`);
    writeFileSync(
      join(app, 'load.cjs'),
      `if (!process.features.require_module) throw new Error('this Node cannot require() ES modules');\nconst m = require('${name}');\nconsole.log(Object.keys(m).length > 0);\n`,
    );
    for (const file of ['load.mjs', 'load.cjs']) {
      const r = await run(process.execPath, [file], app, 30_000);
      expect({ file, ...r }).toEqual({ file, code: 0, stdout: 'true\n', stderr: '' });
    }
  });

  // Throws with CI=true when ZooKeeper is missing, as the real-ZooKeeper suites do.
  const zookeeperMissing = c.zookeeper === true && !realZooKeeper().available;
  test.skipIf(zookeeperMissing).each(['mjs', 'cjs'] as const)(
    "the README's first ts snippet runs as .%s",
    async (kind) => {
      const file = join(app, `first.${kind}`);
      writeFileSync(file, programs(c)[kind]);
      const r = await run(process.execPath, [file], app, 60_000);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(c.stdout);
    },
    90_000,
  );

  for (const [bin] of Object.entries(manifests.get(c.pkg)!.bin ?? {})) {
    test(`its bin ${bin} is linked and answers --help`, async () => {
      const r = await run(join(app, 'node_modules/.bin', bin), ['--help'], app, 30_000);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/usage/i);
    });
  }

  if (c.pkg === 'tenure-server') {
    test('the installed tenure-server serves and exits 0 on SIGTERM', async () => {
      const bin = join(app, 'node_modules/.bin/tenure-server');
      expect((await run(bin, ['--version'], app)).stdout).toBe('tenure-server 0.1.0\n');
      const p = await TenureServerProcess.start({ command: [bin] });
      expect(p.serving).toMatchObject({ version: '0.1.0' });
      expect(await p.stop('SIGTERM')).toMatchObject({ code: 0 });
    });
  }
});
