/**
 * Apache Curator (Debian's libcurator-recipes-java) against the embedded server's TCP listener:
 * InterProcessMutex keeps an unsafe counter exact, and a LeaderLatch pair hands leadership over
 * when the leader closes. The Java side is test/interop/java/CuratorEmbeddedCheck.java, compiled
 * by this suite with javac and driven line by line.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { realZooKeeper } from '@tenure/testing';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const CHECK = fileURLToPath(new URL('./java/CuratorEmbeddedCheck.java', import.meta.url));

/** Curator's protected latch node: `_c_<uuid>-latch-<10 digits>`. */
const LATCH_NODE = /^_c_[0-9a-f-]{36}-latch-\d{10}$/;

describe.skipIf(!zk.available || !java.available)('Apache Curator against the embedded server over TCP', () => {
  let server: EmbeddedServer;
  const warnings: string[] = [];
  let compiled: CompiledJava;
  let curator: JavaProgram;

  beforeAll(async () => {
    server = createEmbeddedServer({
      tickMs: 200,
      logger: { warn: (obj, msg) => warnings.push(`${msg ?? ''} ${String((obj as { err?: Error })?.err ?? '')}`) },
    });
    const [c, address] = await Promise.all([compileJava([CHECK]), server.listen({ port: 0 })]);
    compiled = c;
    curator = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorEmbeddedCheck', args: [address.connectString] },
      /^ready$/,
    );
  });
  afterAll(async () => {
    // The server never had to log a failure for anything these clients sent.
    expect(warnings).toEqual([]);
    await curator?.stop();
    await server?.close();
    compiled?.dispose();
  });

  test('three InterProcessMutex workers x 30 unsafe increments = exactly 90, one holder at a time', async () => {
    const answer = await curator.ask('count /locks/counter /counter 3 30', /^counted /, 60_000);
    expect(answer).toBe('counted 90 1');
    expect(server.node('/counter')?.data?.toString()).toBe('90');
    // Every lock node was deleted on release; the workers' sessions are closed.
    expect(server.node('/locks/counter')?.children ?? []).toEqual([]);
    await expect.poll(() => server.sessions().filter((s) => s.ephemerals.length > 0)).toEqual([]);
  });

  test('a LeaderLatch pair: one leads, and leadership passes to the other when the leader closes', async () => {
    const first = curator.waitFor(/^leader (a|b)$/, 20_000);
    await curator.ask('latch a /election', /^started a$/);
    await curator.ask('latch b /election', /^started b$/);
    const leader = (await first).split(' ')[1]!;
    const follower = leader === 'a' ? 'b' : 'a';
    await expect.poll(() => server.node('/election')?.children.length, { timeout: 10_000 }).toBe(2);
    const nodes = server.node('/election')!.children.sort();
    for (const n of nodes) expect(n).toMatch(LATCH_NODE);
    expect(await curator.ask(`has ${leader}`, /^has /)).toBe(`has ${leader} true`);
    expect(await curator.ask(`has ${follower}`, /^has /)).toBe(`has ${follower} false`);
    // The leader holds the lowest sequence number.
    const bySeq = (n: string): number => Number(n.slice(-10));
    const lowest = nodes.reduce((a, b) => (bySeq(a) < bySeq(b) ? a : b));
    const leaderSession = server.node(`/election/${lowest}`)!.stat.ephemeralOwner;

    const handover = curator.waitFor(new RegExp(`^leader ${follower}$`), 20_000);
    await curator.ask(`close ${leader}`, new RegExp(`^closed ${leader}$`));
    await handover;
    expect(await curator.ask(`has ${follower}`, /^has /)).toBe(`has ${follower} true`);
    const left = server.node('/election')!.children;
    expect(left).toHaveLength(1);
    expect(server.node(`/election/${left[0]}`)!.stat.ephemeralOwner).not.toBe(leaderSession);

    await curator.ask(`close ${follower}`, new RegExp(`^closed ${follower}$`));
    await expect.poll(() => server.node('/election')?.children ?? []).toEqual([]);
  });
});
