/**
 * Every command of `tenure`, its --json form and its exit codes, against one server: written once,
 * run against the embedded server over TCP (cli.test.ts) and a real ZooKeeper 3.8 (cli.zk.test.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateMode, createClient, RetryPolicies, type Client } from '@tenure/client';
import { GroupMember } from '@tenure/group';
import { LeaderLatch, LeaderSelector } from '@tenure/leader';
import { Mutex, ReadWriteLock, Semaphore } from '@tenure/locks';
import { DistributedQueue } from '@tenure/queues';
import { eventually } from '@tenure/testing';
import { sessionHex } from '../src/index.js';
import { json, tenure } from './cli-harness.js';

export interface CliTarget {
  readonly connectString: string;
  close(): Promise<void>;
}

/**
 * `--sasl user:password` (DIGEST-MD5) against a server that knows bob (password `bobPassword`):
 * a node only bob may read, a client without SASL refused (NoAuth), a wrong password AuthFailed.
 */
export function saslSuite(name: string, start: () => Promise<CliTarget>, bobPassword: string): void {
  describe(name, () => {
    let server: CliTarget;
    beforeAll(async () => {
      server = await start();
    });
    afterAll(() => server?.close());

    it('--sasl authenticates as sasl:<user>; without it NoAuth, with a wrong password AuthFailed (exit 1)', async () => {
      const bob = ['--server', server.connectString, '--sasl', `bob:${bobPassword}`];
      expect(await tenure([...bob, 'create', '--acl', 'sasl:bob:cdrwa', '/bobs', 'for bob'])).toMatchObject({
        code: 0,
        stdout: 'Created /bobs\n',
      });
      expect(await tenure(['get', '/bobs', ...bob])).toMatchObject({ code: 0, stdout: 'for bob\n' });
      expect((await tenure([...bob, 'getAcl', '/bobs'])).stdout).toBe('sasl:bob:cdrwa\n');
      const anonymous = await tenure(['--server', server.connectString, 'get', '/bobs']);
      expect(anonymous).toMatchObject({ code: 1, stdout: '' });
      expect(anonymous.stderr).toMatch(/^tenure: NoAuth: /);
      const wrong = await tenure(['--server', server.connectString, '--sasl', 'bob:guess', '--timeout', '5000', 'get', '/bobs']);
      expect(wrong).toMatchObject({ code: 1, stdout: '' });
      expect(wrong.stderr).toMatch(/^tenure: AuthFailed[^\n]*\n$/);
      expect((await tenure(['--server', server.connectString, '--sasl', 'nocolon', 'ls', '/'])).code).toBe(2);
    });
  });
}

export function cliSuite(name: string, start: () => Promise<CliTarget>): void {
  describe(name, () => {
    let server: CliTarget;
    let cs: string;
    const clients: Client[] = [];
    const cleanups: Array<() => Promise<unknown>> = [];
    /** `tenure --server <server> ...args`. */
    const run = (...args: string[]) => tenure(['--server', cs, ...args]);

    async function open(): Promise<Client> {
      const c = createClient({ connectString: cs, sessionTimeoutMs: 4000, retryPolicy: RetryPolicies.exponentialBackoff(20, 5, 200) });
      clients.push(c);
      await c.start();
      return c;
    }

    beforeAll(async () => {
      server = await start();
      cs = server.connectString;
    });
    afterEach(async () => {
      for (const f of cleanups.splice(0).reverse()) await f().catch(() => {});
      await Promise.all(clients.splice(0).map((c) => c.close()));
      const admin = await open();
      for (const c of (await admin.getChildren('/')).children)
        if (c !== 'zookeeper') await admin.delete(`/${c}`, { deletingChildren: true }).catch(() => {});
      await admin.close();
      clients.length = 0;
    });
    afterAll(() => server?.close());

    it('create, get, set, stat, ls, delete, with --json, --server before or after the command', async () => {
      expect(await run('create', '/a', 'one')).toMatchObject({ code: 0, stdout: 'Created /a\n', stderr: '' });
      expect(json(await run('create', '/a/b', 'two', '--json'))).toMatchObject({ path: '/a/b', stat: { version: 0, dataLength: 3 } });
      expect(await tenure(['get', '/a', '--server', cs])).toMatchObject({ code: 0, stdout: 'one\n' });
      const got = json(await run('get', '-s', '/a', '--json'));
      expect(got).toMatchObject({
        path: '/a',
        data: { encoding: 'utf8', value: 'one', bytes: 3 },
        stat: { numChildren: 1, ephemeralOwner: '0x0' },
      });
      expect(typeof got.stat.czxid).toBe('string');
      const getS = await run('get', '-s', '/a');
      expect(getS.stdout).toMatch(/^one\ncZxid = 0x[0-9a-f]+\nctime = .*\n(.*\n)*numChildren = 1\n$/);

      expect(json(await run('set', '/a', 'uno', '--json'))).toMatchObject({ path: '/a', stat: { version: 1 } });
      expect(await run('set', '-v', '1', '/a', 'eins')).toMatchObject({ code: 0, stdout: '' });
      const stale = await run('set', '-v', '1', '/a', 'x');
      expect(stale).toMatchObject({ code: 1, stdout: '' });
      expect(stale.stderr).toMatch(/^tenure: BadVersion: .*\(\/a\)\n$/);
      expect((await run('set', '-s', '/a', 'one')).stdout).toMatch(/dataVersion = 3/);
      expect(json(await run('set', '--base64', '/a/b', Buffer.from([0xff, 0]).toString('base64'), '--json')).stat.dataLength).toBe(2);
      expect(json(await run('get', '/a/b', '--json')).data).toEqual({ encoding: 'base64', value: '/wA=', bytes: 2 });
      expect((await run('get', '/a/b')).stdout).toBe('base64:/wA=\n');

      expect(json(await run('stat', '/a', '--json'))).toMatchObject({ path: '/a', stat: { version: 3, numChildren: 1 } });
      expect((await run('stat', '/a')).stdout).toMatch(/^cZxid = 0x[0-9a-f]+\n(.*\n)*dataVersion = 3\n(.*\n)*numChildren = 1\n$/);

      await run('create', '/a/c');
      expect(await run('ls', '/a')).toMatchObject({ code: 0, stdout: 'b\nc\n' });
      expect(json(await run('ls', '/a', '--json'))).toEqual({ path: '/a', children: ['b', 'c'] });
      expect(json(await run('ls', '-s', '/a', '--json')).stat.numChildren).toBe(2);
      expect((await run('ls', '-R', '/a')).stdout).toBe('/a\n/a/b\n/a/c\n');
      expect(json(await run('ls', '-R', '/a', '--json'))).toEqual({ path: '/a', paths: ['/a', '/a/b', '/a/c'], truncated: false });

      const notEmpty = await run('delete', '/a');
      expect(notEmpty.code).toBe(1);
      expect(notEmpty.stderr).toMatch(/^tenure: NotEmpty: .*\(\/a\)\n$/);
      expect(json(await run('delete', '/a/c', '--json'))).toEqual({ path: '/a/c', deleted: true });
      expect(await run('delete', '--recursive', '/a')).toMatchObject({ code: 0, stdout: '' });
      expect((await run('ls', '/')).stdout).toBe('zookeeper\n');
      await run('create', '/d');
      await run('create', '/d/e');
      expect(await run('deleteall', '/d')).toMatchObject({ code: 0, stdout: '' });
      await run('create', '-p', '/d2/e');
      expect(json(await run('deleteall', '/d2', '--json'))).toEqual({ path: '/d2', deleted: true });
      expect((await run('stat', '/d2')).stderr).toMatch(/^tenure: NoNode: /);
    });

    it('--server with a chroot: paths are the chroot’s, sessions still asks the servers', async () => {
      await run('create', '-p', '/tenant/app/config', 'x');
      const chrooted = (...args: string[]) => tenure(['--server', `${cs}/tenant`, ...args]);
      expect((await chrooted('ls', '/')).stdout).toBe('app\n');
      expect((await chrooted('get', '/app/config')).stdout).toBe('x\n');
      expect(json(await chrooted('ls', '-R', '/', '--json')).paths).toEqual(['/', '/app', '/app/config']);
      expect(json(await chrooted('sessions', '--json')).source).toBe('four-letter-words');
    });

    it('create modes: -e, -s, -c, -t ttl, -p, --acl', async () => {
      const seq = json(await run('create', '-s', '/q-', 'x', '--json'));
      expect(seq.path).toMatch(/^\/q-\d{10}$/);
      const eph = await run('create', '-e', '/eph');
      expect(eph).toMatchObject({ code: 0, stdout: 'Created /eph\n' });
      expect(eph.stderr).toMatch(/ephemeral node goes with this session/);
      expect((await run('ls', '/')).stdout).not.toMatch(/^eph$/m); // gone with the command's session
      expect(json(await run('create', '-e', '-s', '/es-', '--json')).stat.ephemeralOwner).not.toBe('0x0');
      expect(await run('create', '-c', '/box')).toMatchObject({ code: 0 });
      const ttl = json(await run('create', '-t', '60000', '/ttl', 'v', '--json'));
      expect(ttl.path).toBe('/ttl');
      expect(json(await run('create', '-s', '-t', '60000', '/ttls-', '--json')).path).toMatch(/^\/ttls-\d{10}$/);
      expect(await run('create', '-p', '/deep/er/node', 'x')).toMatchObject({ code: 0, stdout: 'Created /deep/er/node\n' });
      expect(await run('create', '/nop/e')).toMatchObject({ code: 1 });
      expect((await run('create', '/nop/e')).stderr).toMatch(/^tenure: NoNode: /);
      expect(await run('create', '--acl', 'world:anyone:r', '/ro', 'x')).toMatchObject({ code: 0 });
      expect(json(await run('getAcl', '/ro', '--json')).acl).toEqual([{ scheme: 'world', id: 'anyone', perms: 'r' }]);
      for (const bad of [
        ['-c', '-e'],
        ['-t', '5', '-e'],
        ['-t', 'abc'],
        ['-t', '0'],
      ]) {
        const r = await run('create', ...bad, '/bad');
        expect(r.code, bad.join(' ')).toBe(2);
        expect(r.stderr).toMatch(/^tenure: .+\n$/);
      }
      expect((await run('create', '/exists-twice')).code).toBe(0);
      expect((await run('create', '/exists-twice')).stderr).toMatch(/^tenure: NodeExists: /);
    });

    it('getAcl, setAcl, --auth digest, and NoAuth as exit code 1', async () => {
      await run('create', '/secure', 'secret');
      expect((await run('getAcl', '/secure')).stdout).toBe('world:anyone:cdrwa\n');
      expect(await run('setAcl', '/secure', 'auth::cdrwa', '--auth', 'digest:alice:pw')).toMatchObject({ code: 0 });
      expect((await run('getAcl', '/secure')).stderr).toMatch(/^tenure: NoAuth: /);
      const acl = json(await run('getAcl', '/secure', '--json', '--auth', 'digest:alice:pw'));
      expect(acl.acl).toEqual([{ scheme: 'digest', id: expect.stringMatching(/^alice:.+=$/), perms: 'cdrwa' }]);
      expect(acl.aclVersion).toBe(1);
      const denied = await run('get', '/secure');
      expect(denied).toMatchObject({ code: 1, stdout: '' });
      expect(denied.stderr).toMatch(/^tenure: NoAuth: .*\(\/secure\)\n$/);
      expect(await run('get', '/secure', '--auth', 'digest:alice:pw')).toMatchObject({ code: 0, stdout: 'secret\n' });
      expect((await run('set', '/secure', 'x', '--auth', 'digest:bob:pw')).stderr).toMatch(/^tenure: NoAuth: /);
      expect(json(await run('setAcl', '-v', '1', '/secure', 'world:anyone:cdrwa', '--auth=digest:alice:pw', '--json')).stat.aversion).toBe(
        2,
      );
      expect((await run('setAcl', '/secure', 'world:anyone:xyz')).code).toBe(2);
      expect((await run('setAcl', '/secure', 'nonsense')).code).toBe(2);
    });

    it('usage errors exit 2 with one line, before any connection; no server exits 1', async () => {
      for (const args of [
        ['frobnicate', '/'],
        ['ls'],
        ['ls', '/a', '/b'],
        ['ls', '--bogus', '/'],
        ['get', 'relative/path'],
        ['--server'],
        ['--timeout', 'soon', 'ls', '/'],
        ['set', '-v', 'x', '/a', 'b'],
      ]) {
        const r = await tenure(['--server', '127.0.0.1:1', ...args]);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr, args.join(' ')).toMatch(/^tenure: [^\n]+\n$/);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
      expect((await tenure(['frobnicate'])).stderr).toBe('tenure: unknown command "frobnicate" (tenure help lists them)\n');
      // With --json, stdout is one JSON document even on failure: the error's.
      const missing = await run('get', '/missing', '--json');
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout)).toEqual({
        error: { name: 'NoNode', code: 'NONODE', message: 'NoNode: no node (/missing)', exitCode: 1 },
      });
      const badUsage = await tenure(['--json', 'frobnicate']);
      expect(badUsage.code).toBe(2);
      expect(JSON.parse(badUsage.stdout)).toMatchObject({ error: { name: 'UsageError', exitCode: 2 } });
      const down = await tenure(['--server', '127.0.0.1:1', '--timeout', '800', 'ls', '/']);
      expect(down).toMatchObject({ code: 1, stdout: '', stderr: 'tenure: cannot connect to 127.0.0.1:1 within 800 ms\n' });
      const tls = await run('--tls-ca', '/nonexistent/ca.pem', 'ls', '/');
      expect(tls.code).toBe(2);
      expect(tls.stderr).toBe('tenure: --tls-ca: cannot read /nonexistent/ca.pem: ENOENT\n');
      const help = await tenure(['help']);
      expect(help.code).toBe(0);
      for (const c of [
        'ls',
        'get',
        'set',
        'create',
        'delete',
        'stat',
        'getAcl',
        'setAcl',
        'tree',
        'find',
        'watch',
        'dump',
        'import',
        'locks',
        'leaders',
        'groups',
        'services',
        'queues',
        'sessions',
      ]) {
        expect(help.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
      }
      // The TLS flags work (cli-tls.test.ts): the help says what they do, not that they are to come.
      expect(help.stdout).not.toContain('once @tenure/client');
      expect(help.stdout).toMatch(/^ {2}--tls-ca FILE --tls-cert FILE --tls-key FILE +TLS: trust this CA/m);
      expect((await tenure(['help', 'locks'])).stdout).toMatch(/^usage: tenure locks /);
      expect((await tenure(['--version'])).stdout).toMatch(/^tenure \d+\.\d+\.\d+\n$/);
    });

    it('tree with data sizes, find PATTERN', async () => {
      const admin = await open();
      await admin.create('/app/config/db', 'x'.repeat(2048), { createParents: true });
      await admin.create('/app/config/cache', 'abc');
      await admin.create('/app/locks/orders', null, { createParents: true });
      expect((await run('tree', '/app')).stdout).toBe(
        [
          '/app (0 B)',
          '├── config (0 B)',
          '│   ├── cache (3 B)',
          '│   └── db (2.0 KiB)',
          '└── locks (0 B)',
          '    └── orders (0 B)',
          '',
        ].join('\n'),
      );
      const t = json(await run('tree', '/app', '--json'));
      expect(t.truncated).toBe(false);
      expect(t.tree).toMatchObject({
        path: '/app',
        children: [
          {
            name: 'config',
            children: [
              { name: 'cache', bytes: 3 },
              { name: 'db', bytes: 2048 },
            ],
          },
          { name: 'locks' },
        ],
      });
      expect((await run('tree', '--limit', '2', '/app')).stderr).toMatch(/stopped after 2 nodes/);
      expect((await run('find', 'c*', '/app')).stdout).toBe('/app/config\n/app/config/cache\n');
      expect(json(await run('find', '/app/**/or?ers', '--json'))).toEqual({
        pattern: '/app/**/or?ers',
        root: '/',
        matches: ['/app/locks/orders'],
        truncated: false,
      });
      expect((await run('find', 'nothing-like-this')).stdout).toBe('');
      expect((await run('tree', '/missing')).stderr).toMatch(/^tenure: NoNode: /);
    });

    it('dump --json and import give back an equal tree (data base64, ACLs, modes)', async () => {
      const admin = await open();
      await admin.create('/src/text', 'hello', { createParents: true });
      await admin.create('/src/binary', Buffer.from([0, 1, 2, 0xff]));
      await admin.create('/src/binary/child', '');
      await admin.create('/src/ro', 'r', { acl: [{ perms: 1, id: { scheme: 'world', id: 'anyone' } }] });
      await admin.create('/src/seq-', 's', { mode: CreateMode.PERSISTENT_SEQUENTIAL });
      await admin.create('/src/eph', 'e', { mode: CreateMode.EPHEMERAL });
      const first = json(await run('dump', '/src', '--json'));
      expect(first).toMatchObject({ format: 'tenure-dump', version: 1, root: '/src', truncated: false });
      expect(first.nodes.map((n: { path: string }) => n.path)).toEqual([
        '/src',
        '/src/binary',
        '/src/binary/child',
        '/src/eph',
        '/src/ro',
        expect.stringMatching(/^\/src\/seq-\d{10}$/),
        '/src/text',
      ]);
      expect(first.nodes.find((n: { path: string }) => n.path === '/src/binary').data).toBe('AAEC/w==');
      expect(first.nodes.find((n: { path: string }) => n.path === '/src/eph')).toMatchObject({
        mode: 'ephemeral',
        ephemeralOwner: sessionHex(admin.sessionId),
      });
      expect(first.nodes.find((n: { path: string }) => n.path === '/src/ro').acl).toEqual([{ scheme: 'world', id: 'anyone', perms: 'r' }]);

      const { writeFileSync, mkdtempSync, rmSync } = await import('node:fs');
      const path = await import('node:path');
      const { tmpdir } = await import('node:os');
      const dir = mkdtempSync(path.join(tmpdir(), 'tenure-dump-'));
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      const file = path.join(dir, 'tree.json');
      writeFileSync(file, (await run('dump', '/src')).stdout);

      // Into a copy: the same tree under another root (the ephemeral node left out, as its session is not ours).
      const imported = await run('import', file, '/copy');
      expect(imported).toMatchObject({ code: 0, stdout: 'Imported 6 nodes, skipped 1 (ephemeral nodes and what is under them, or /)\n' });
      const copy = json(await run('dump', '/copy', '--json'));
      const strip = (d: typeof first, root: string) =>
        d.nodes
          .filter((n: { mode: string }) => n.mode !== 'ephemeral')
          .map((n: Record<string, unknown>) => ({ ...n, path: (n.path as string).slice(root.length) }));
      expect(strip(copy, '/copy')).toEqual(strip(first, '/src'));

      // Back in place after a delete, ephemerals as persistent nodes.
      await admin.delete('/src', { deletingChildren: true });
      expect(json(await run('import', '--ephemerals', 'persistent', file, '--json'))).toEqual({
        source: file,
        root: '/src',
        created: 7,
        updated: 0,
        unchanged: 0,
        skipped: 0,
      });
      const again = json(await run('dump', '/src', '--json'));
      expect(again.nodes.map((n: Record<string, unknown>) => ({ ...n, mode: 'x', ephemeralOwner: undefined }))).toEqual(
        first.nodes.map((n: Record<string, unknown>) => ({ ...n, mode: 'x', ephemeralOwner: undefined })),
      );

      // Existing nodes: NodeExists, unless --overwrite.
      const clash = await run('import', file);
      expect(clash.code).toBe(1);
      expect(clash.stderr).toMatch(/^tenure: NodeExists: /);
      await admin.setData('/src/text', 'changed');
      expect(json(await run('import', '--overwrite', file, '--json'))).toMatchObject({ updated: 1, unchanged: 5, skipped: 1 });
      expect((await run('get', '/src/text')).stdout).toBe('hello\n');

      writeFileSync(path.join(dir, 'bad.json'), '{"format":"other"}');
      expect((await run('import', path.join(dir, 'bad.json'))).stderr).toMatch(
        /^tenure: .*bad\.json: not a tenure dump: "format" is not "tenure-dump"\n$/,
      );
      expect((await run('import', path.join(dir, 'missing.json'))).code).toBe(2);
      expect((await run('import', path.join(dir, 'bad.json'))).code).toBe(2);
    });

    it('watch PATH prints every change under it until stopped; --json streams one array', async () => {
      const admin = await open();
      await admin.create('/w', null);
      for (const asJson of [false, true]) {
        const stop = new AbortController();
        let seen = '';
        const running = tenure(['--server', cs, 'watch', '/w', ...(asJson ? ['--json'] : [])], {
          signal: stop.signal,
          onStdout: (t) => (seen = t),
        });
        // Until the watch is in place, a probe node comes and goes unseen.
        await eventually(async () => {
          await admin.create(`/w/probe-${asJson}`, null).catch(() => admin.delete(`/w/probe-${asJson}`));
          return seen.includes(`probe-${asJson}`);
        }, 10_000);
        await admin.create(`/w/probe-${asJson}`, null).catch(() => {});
        await admin.setData(`/w/probe-${asJson}`, 'x');
        await admin.create(`/w/probe-${asJson}/deep`, null);
        await admin.delete(`/w/probe-${asJson}/deep`);
        const deepDeleted = new RegExp(`NodeDeleted(\\s+|","path":")/w/probe-${asJson}/deep`);
        await eventually(() => deepDeleted.test(seen), 10_000);
        stop.abort();
        const r = await running;
        expect(r.code).toBe(0);
        if (asJson) {
          const events = JSON.parse(r.stdout) as { type: string; path: string }[];
          expect(events.map((e) => [e.type, e.path])).toEqual(
            expect.arrayContaining([
              ['NodeCreated', '/w/probe-true'],
              ['NodeDataChanged', '/w/probe-true'],
              ['NodeCreated', '/w/probe-true/deep'],
              ['NodeDeleted', '/w/probe-true/deep'],
            ]),
          );
        } else {
          expect(r.stdout).toMatch(/^\S+Z {2}NodeCreated {2}\/w\/probe-false$/m);
          expect(r.stdout).toMatch(/NodeDataChanged {2}\/w\/probe-false$/m);
          expect(r.stderr).toBe('tenure: watching /w (Ctrl-C to stop)\n');
        }
      }
    });

    it("locks, leaders, groups, services, queues and sessions for Tenure's recipes", async () => {
      const [a, b, c, d] = [await open(), await open(), await open(), await open()];
      const holder = await new Mutex(a, '/locks/orders', { data: 'holder-A' }).acquire();
      cleanups.push(() => holder.release());
      const waiting = new Mutex(b, '/locks/orders', { data: 'waiter-B' }).acquire();
      waiting.catch(() => {});
      const rw = new ReadWriteLock(c, '/locks/rw');
      const writer = await rw.writeLock.acquire();
      cleanups.push(() => writer.release());
      const reader = new ReadWriteLock(d, '/locks/rw').readLock.acquire();
      reader.catch(() => {});
      const sem = new Semaphore(d, '/locks/sem', 3, { data: 'slot' });
      const leases = await sem.acquire(2);
      cleanups.push(() => Promise.all(leases.map((l) => l.release())));
      const alpha = new LeaderLatch(a, '/election', { id: 'alpha' });
      await alpha.start();
      const beta = new LeaderLatch(b, '/election', { id: 'beta' });
      await beta.start();
      cleanups.push(
        () => alpha.close(),
        () => beta.close(),
      );
      const selector = new LeaderSelector(c, '/selector', {
        id: 'sel-c',
        takeLeadership: (signal) => new Promise<void>((r) => signal.addEventListener('abort', () => r())),
      });
      await selector.start();
      cleanups.push(() => selector.close());
      const m1 = new GroupMember(a, '/groups/workers', 'worker-1', 'w1');
      const m2 = new GroupMember(b, '/groups/workers', 'worker-2', 'w2');
      await Promise.all([m1.start(), m2.start()]);
      cleanups.push(
        () => m1.close(),
        () => m2.close(),
      );
      const instance = {
        name: 'orders',
        id: 'inst-1',
        address: '10.1.2.3',
        port: 8080,
        sslPort: null,
        payload: null,
        registrationTimeUTC: 1_700_000_000_000,
        serviceType: 'DYNAMIC',
        uriSpec: null,
      };
      await c.create('/services/orders/inst-1', JSON.stringify(instance), { mode: CreateMode.EPHEMERAL, createParentContainers: true });
      await d.create('/queues/jobs', null, { createParents: true });
      for (const item of ['j1', 'j2']) await d.create('/queues/jobs/queue-', item, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
      // A DistributedQueue's items are Curator's ItemSerializer frames: the CLI shows what is inside.
      const framed = new DistributedQueue(d, '/queues/framed');
      await framed.start();
      cleanups.push(() => framed.close());
      await framed.putMulti([Buffer.from('order-1'), Buffer.from('order-2')]);
      await framed.put(Buffer.from('order-3'));
      await eventually(async () => {
        const l = json(await run('locks', '--json'));
        return (
          l.locks.find((x: { path: string }) => x.path === '/locks/orders')?.waiters.length === 1 &&
          l.locks.find((x: { path: string }) => x.path === '/locks/rw')?.waiters.length === 1
        );
      }, 10_000);

      const locks = json(await run('locks', '/locks', '--json'));
      expect(locks.walk).toMatchObject({ root: '/locks', truncated: false });
      const orders = locks.locks.find((l: { path: string }) => l.path === '/locks/orders');
      expect(orders).toMatchObject({
        kind: 'mutex',
        holder: { data: { value: 'holder-A' }, sessionId: sessionHex(a.sessionId), fencingToken: holder.fencingToken.toString() },
        waiters: [{ data: { value: 'waiter-B' }, sessionId: sessionHex(b.sessionId) }],
      });
      expect(locks.locks.find((l: { path: string }) => l.path === '/locks/rw')).toMatchObject({
        kind: 'read-write',
        holders: [{ kind: 'write' }],
        waiters: [{ kind: 'read' }],
      });
      expect(locks.locks.find((l: { path: string }) => l.path === '/locks/sem')).toMatchObject({
        kind: 'semaphore',
        holders: [{ data: { value: 'slot' } }, { data: { value: 'slot' } }],
        waiters: [],
      });
      const table = (await run('locks', '/locks')).stdout;
      expect(table).toMatch(/^LOCK +KIND +ROLE +SESSION +TOKEN +HELD FOR +DATA +NODE$/m);
      expect(table).toMatch(
        new RegExp(`^/locks/orders +mutex +holder +${sessionHex(a.sessionId)} +${holder.fencingToken} +\\S+ (ms|s) +holder-A +_c_`, 'm'),
      );
      expect(table).toMatch(new RegExp(`^/locks/orders +mutex +waiter 1 +${sessionHex(b.sessionId)} +\\d+ +- +waiter-B +_c_`, 'm'));

      const leaders = json(await run('leaders', '--json'));
      const election = leaders.elections.find((e: { path: string }) => e.path === '/election');
      expect(election).toMatchObject({
        kind: 'leader-latch',
        leader: { id: 'alpha', isLeader: true },
        participants: [{ id: 'alpha' }, { id: 'beta', isLeader: false }],
      });
      expect(leaders.elections.find((e: { path: string }) => e.path === '/selector')).toMatchObject({
        kind: 'leader-selector',
        leader: { id: 'sel-c' },
      });
      const leadersTable = (await run('leaders', '/election')).stdout;
      expect(leadersTable).toMatch(/^\/election +leader-latch +leader +alpha +0x/m);
      expect(leadersTable).toMatch(/^\/election +leader-latch +participant 1 +beta +0x/m);

      expect(json(await run('groups', '--json')).groups).toEqual([
        {
          path: '/groups/workers',
          members: [
            expect.objectContaining({ id: 'worker-1', data: { encoding: 'utf8', value: 'w1', bytes: 2 } }),
            expect.objectContaining({ id: 'worker-2', sessionId: sessionHex(b.sessionId) }),
          ],
        },
      ]);
      expect((await run('groups', '/groups')).stdout).toMatch(/^\/groups\/workers +worker-1 +0x[0-9a-f]+ +w1$/m);

      expect(json(await run('services', '--json')).services).toEqual([
        expect.objectContaining({
          name: 'orders',
          basePath: '/services',
          instances: [expect.objectContaining({ id: 'inst-1', address: '10.1.2.3', port: 8080 })],
        }),
      ]);
      expect((await run('services')).stdout).toMatch(
        /^orders +inst-1 +10\.1\.2\.3 +8080 +DYNAMIC +yes +0x[0-9a-f]+ +\/services\/orders\/inst-1$/m,
      );

      expect(json(await run('queues', '--json')).queues).toEqual([
        expect.objectContaining({
          path: '/queues/framed',
          kind: 'distributed',
          depth: 2,
          oldest: expect.objectContaining({
            data: expect.objectContaining({ encoding: 'base64' }),
            items: [expect.objectContaining({ value: 'order-1' }), expect.objectContaining({ value: 'order-2' })],
          }),
        }),
        expect.objectContaining({
          path: '/queues/jobs',
          kind: 'distributed',
          depth: 2,
          oldest: expect.objectContaining({ data: { encoding: 'utf8', value: 'j1', bytes: 2 }, items: null }),
        }),
      ]);
      const queues = (await run('queues')).stdout;
      expect(queues).toMatch(/^\/queues\/jobs +distributed +2 +queue-0000000000 +\S+ (ms|s) +j1$/m);
      expect(queues).toMatch(/^\/queues\/framed +distributed +2 +queue-0000000000 +\S+ (ms|s) +order-1 \| order-2$/m);

      const sessions = json(await run('sessions', '--json'));
      expect(sessions.source).toBe('four-letter-words');
      const sa = sessions.sessions.find((s: { sessionId: string }) => s.sessionId === sessionHex(a.sessionId));
      expect(sa).toMatchObject({
        clientAddress: expect.stringMatching(/^(127\.0\.0\.1|\[?[0-9a-f:]+\]?):\d+$/),
        timeoutMs: a.negotiatedTimeoutMs,
      });
      expect(sa.ephemerals).toEqual(
        expect.arrayContaining(['/groups/workers/worker-1', expect.stringMatching(/^\/locks\/orders\/_c_.*-lock-\d{10}$/)]),
      );
      expect((await run('sessions')).stdout).toMatch(
        new RegExp(`^${sessionHex(a.sessionId)} +\\S+:\\d+ +${a.negotiatedTimeoutMs} ms `, 'm'),
      );

      expect((await run('locks', '/nowhere')).stderr).toMatch(/^tenure: NoNode: /);
      expect((await run('locks', '/election')).stdout).toBe('no locks found\n');
      const limited = await run('locks', '--limit', '3', '--json');
      expect(json(limited).walk).toMatchObject({ visited: 3, truncated: true });
      expect(limited.stderr).toMatch(/the walk stopped at --limit 3 nodes/);
    });
  });
}
