/**
 * The two forms over one etcd and prefix, with real Java on the wire side: Tenure Mutexes over
 * etcdTransport (in-process) and Apache Curator's InterProcessMutex through a tenure-server front end
 * (test/interop/java/CuratorLockWorker.java) on one lock path. Every holder does an unsafe
 * read-modify-write of one counter: the values read are 0..N-1, each once, so no two holders
 * overlapped, and taken in that order (the holders' own order) their fencing tokens (the lock
 * node's czxid) rise across both forms. Java and zkCli read what Tenure wrote in-process and
 * Tenure reads what they wrote; in-process watches fire for Java's writes through the front end.
 * JVM start-ups make this a slow file; test/etcd/mixed-forms.test.ts is the same with Tenure on both sides.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, NoNodeError, type Client, type WatchEvent } from '@tenure/client';
import { etcdTransport, type EtcdTransport } from '@tenure/etcd';
import { Mutex } from '@tenure/locks';
import type { TenureServerProcess } from '@tenure/testing';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from '../interop/java.js';
import { ZKCLI, zkCli } from '../interop/zkcli.js';
import { startFrontEnds, type FrontEnds } from './front-ends.js';

const java = javaToolchain();
const WORKER = fileURLToPath(new URL('../interop/java/CuratorLockWorker.java', import.meta.url));
const PREFIX = '/mixed-curator';
/** Curator: 2 CuratorFrameworks; Tenure: 2 in-process clients; each does ROUNDS increments. */
const ROUNDS = 20;

interface Hold {
  form: 'curator' | 'tenure';
  valueRead: number;
  token: bigint;
}

function nextEvent(): { watch: (e: WatchEvent) => void; event: Promise<WatchEvent> } {
  let watch!: (e: WatchEvent) => void;
  const event = new Promise<WatchEvent>((resolve) => (watch = resolve));
  return { watch, event };
}

describe.skipIf(!java.available)('a Tenure Mutex over etcdTransport and a Curator InterProcessMutex through tenure-server', () => {
  let frontEnds: FrontEnds;
  let server: TenureServerProcess;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let transport: EtcdTransport;
  let inProcess: Client[];

  beforeAll(async () => {
    [frontEnds, compiled] = await Promise.all([startFrontEnds(PREFIX, 1), compileJava([WORKER])]);
    server = frontEnds.servers[0]!;
    curator = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorLockWorker', args: [server.connectString] },
      /^ready$/,
      60_000,
    );
    transport = etcdTransport(frontEnds.etcd.endpoint, { prefix: PREFIX });
    inProcess = [0, 1].map(() => createClient({ transport, sessionTimeoutMs: 10_000 }));
    await Promise.all(inProcess.map((c) => c.start()));
  }, 120_000);
  afterAll(async () => {
    await Promise.all((inProcess ?? []).map((c) => c.close()));
    await transport?.close();
    await curator?.stop();
    await frontEnds?.stop();
    compiled?.dispose();
  });

  it('exclude each other on one path: the counter is exact, and fencing tokens rise across both forms', async () => {
    const [admin] = inProcess as [Client, Client];
    await admin.create('/counter', '0');
    const holds: Hold[] = [];
    const tokenLine = (line: string): void => {
      const [, , value, czxid] = line.split(' ');
      holds.push({ form: 'curator', valueRead: Number(value), token: BigInt(czxid!) });
    };
    const seen = curator.lines.length;
    const curatorDone = curator.ask(`count c1 /locks/mixed /counter 2 ${ROUNDS} tokens`, /^counted c1 /, 150_000);
    const tenureDone = Promise.all(
      inProcess.map(async (c) => {
        const mutex = new Mutex(c, '/locks/mixed');
        for (let i = 0; i < ROUNDS; i++) {
          await using lease = await mutex.acquire({ timeoutMs: 60_000 });
          const { data } = await c.getData('/counter');
          const valueRead = Number(data.toString());
          holds.push({ form: 'tenure', valueRead, token: lease.fencingToken });
          await c.setData('/counter', String(valueRead + 1));
        }
        await mutex.close();
      }),
    );
    expect(await curatorDone).toBe(`counted c1 ${2 * ROUNDS}`);
    await tenureDone;
    curator.lines
      .slice(seen)
      .filter((l) => l.startsWith('token c1 '))
      .forEach(tokenLine);

    const total = 4 * ROUNDS;
    await admin.sync('/counter');
    expect((await admin.getData('/counter')).data.toString()).toBe(String(total));
    // Each value read exactly once: no two holders (of either form) were inside at once.
    holds.sort((x, y) => x.valueRead - y.valueRead);
    expect(holds.map((h) => h.valueRead)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(holds.filter((h) => h.form === 'curator')).toHaveLength(2 * ROUNDS);
    // In the holders' own order, the lock node's czxid rises, across forms too.
    for (let i = 1; i < holds.length; i++) expect(holds[i]!.token > holds[i - 1]!.token, `hold ${i}`).toBe(true);
    const handOversAcrossForms = holds.filter((h, i) => i > 0 && h.form !== holds[i - 1]!.form).length;
    expect(handOversAcrossForms).toBeGreaterThan(0);
    await admin.sync('/locks/mixed');
    // No lock node is left behind; the parent is a container (Curator creates it so), which the
    // server may already have reaped once its last child went.
    const left = await admin.getChildren('/locks/mixed').then(
      (r) => r.children,
      (err: unknown) => {
        if (err instanceof NoNodeError) return [];
        throw err;
      },
    );
    expect(left).toEqual([]);
  }, 180_000);

  it('Java reads what Tenure wrote in-process, and Tenure reads what Java wrote through the front end', async () => {
    const [c] = inProcess as [Client];
    await c.create('/from-tenure', 'written in-process');
    expect(await curator.ask('read /from-tenure', /^read \/from-tenure /)).toBe('read /from-tenure written in-process');
    expect(await curator.ask('write /from-java/node through-the-front-end', /^wrote /)).toBe('wrote /from-java/node');
    await c.sync('/from-java/node');
    expect((await c.getData('/from-java/node')).data.toString()).toBe('through-the-front-end');
  });

  it.skipIf(!existsSync(ZKCLI))(
    'zkCli reads what Tenure wrote in-process, and Tenure reads what zkCli wrote',
    async () => {
      const [c] = inProcess as [Client];
      await c.create('/for-zkcli', 'tenure-data');
      const out = await zkCli(server.connectString, ['get /for-zkcli', 'create /from-zkcli cli-data', 'quit']);
      expect(out).toMatch(/^tenure-data$/m);
      expect(out).toContain('Created /from-zkcli');
      await c.sync('/from-zkcli');
      expect((await c.getData('/from-zkcli')).data.toString()).toBe('cli-data');
    },
    90_000,
  );

  it("in-process watches fire for Java's writes through the front end", async () => {
    const [c] = inProcess as [Client];
    await curator.ask('write /watched v1', /^wrote /);
    await c.sync('/watched');
    const changed = nextEvent();
    const created = nextEvent();
    const child = nextEvent();
    await c.getData('/watched', { watch: changed.watch });
    expect(await c.exists('/watched/child', { watch: created.watch })).toBeNull();
    await c.getChildren('/watched', { watch: child.watch });
    await curator.ask('write /watched v2', /^wrote /);
    expect(await changed.event).toMatchObject({ type: 'NodeDataChanged', path: '/watched' });
    await curator.ask('write /watched/child c', /^wrote /);
    expect(await created.event).toMatchObject({ type: 'NodeCreated', path: '/watched/child' });
    expect(await child.event).toMatchObject({ type: 'NodeChildrenChanged', path: '/watched' });
    // The reads after each event show at least what the event announced.
    expect((await c.getData('/watched')).data.toString()).toBe('v2');
    expect((await c.getData('/watched/child')).data.toString()).toBe('c');
  });
});
