/**
 * Failover (issue 22, Must show): a SIGKILLed client's ephemeral is gone within its negotiated
 * session timeout plus 3 s, in both forms: a client of etcdTransport in a process of its own, and a
 * client of a tenure-server front end over etcd. The holder (fixtures/ephemeral-holder.ts) dies
 * without closing anything, so only its lease's expiry can remove the node; an in-process watcher
 * on the same etcd and prefix times the NodeDeleted from the holder's exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '@tenure/client';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { eventually, TenureServerProcess, TestingEtcd } from '@tenure/testing';

const HOLDER = fileURLToPath(new URL('./fixtures/ephemeral-holder.ts', import.meta.url));
const TSCONFIG = fileURLToPath(new URL('../../packages/server/test/fixtures/tsconfig.json', import.meta.url));
const PREFIX = '/sigkill';

describe('a SIGKILLed client over etcd', () => {
  let etcd: TestingEtcd;
  let frontEnd: TenureServerProcess;
  let transport: EtcdTransport;
  let watcher: Client;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    etcd = await TestingEtcd.start();
    frontEnd = await TenureServerProcess.start({ args: ['--etcd', etcd.endpoint, '--etcd-prefix', PREFIX, '--tick-time', '1000'] });
    transport = etcdTransport(etcd.endpoint, { prefix: PREFIX });
    watcher = createClient({ transport, sessionTimeoutMs: 20_000 });
    await watcher.start({ timeoutMs: 20_000 });
  }, 60_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await watcher?.close();
    await transport?.close();
    await frontEnd?.stop().catch(() => undefined);
    await etcd?.close();
  });

  /** Starts a holder of `path`; resolves with its session id and negotiated timeout once the node exists. */
  const holder = async (form: 'etcd' | 'zk', target: string, path: string): Promise<{ child: ChildProcess; id: bigint; T: number }> => {
    const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, form, target, PREFIX, path, '4000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG },
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const m = await eventually(() => /ready ([0-9a-f]+) (\d+)/.exec(out), 30_000, `the ${form} holder to be ready`);
    return { child, id: BigInt(`0x${m[1]}`), T: Number(m[2]) };
  };

  /** SIGKILLs the holder; resolves with the ms from its exit until the watcher sees its node deleted. */
  const goneAfterKill = async (h: { child: ChildProcess; id: bigint }, path: string): Promise<number> => {
    await watcher.sync(path);
    expect((await watcher.exists(path))?.ephemeralOwner).toBe(h.id);
    let deleted!: () => void;
    const gone = new Promise<void>((resolve) => (deleted = resolve));
    let deletedAt = 0;
    await watcher.exists(path, {
      watch: (e) => {
        if (e.type !== 'NodeDeleted') return;
        deletedAt = performance.now();
        deleted();
      },
    });
    const exited = new Promise<void>((resolve) => h.child.once('exit', () => resolve()));
    h.child.kill('SIGKILL');
    await exited;
    const exitAt = performance.now();
    await gone;
    return deletedAt - exitAt;
  };

  it('etcdTransport in its own process: the ephemeral is gone within the timeout plus 3 s', async () => {
    const h = await holder('etcd', etcd.endpoint, '/held-in-process');
    const ms = await goneAfterKill(h, '/held-in-process');
    console.log(`etcdTransport holder SIGKILLed: ephemeral gone after ${Math.round(ms)} ms (negotiated timeout ${h.T} ms)`);
    expect(ms).toBeLessThan(h.T + 3000);
  }, 60_000);

  it('a client of a tenure-server front end: the ephemeral is gone within the timeout plus 3 s', async () => {
    const h = await holder('zk', frontEnd.connectString, '/held-via-front-end');
    const ms = await goneAfterKill(h, '/held-via-front-end');
    console.log(`front-end client SIGKILLed: ephemeral gone after ${Math.round(ms)} ms (negotiated timeout ${h.T} ms)`);
    expect(ms).toBeLessThan(h.T + 3000);
  }, 60_000);
});
