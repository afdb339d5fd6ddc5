/**
 * SASL DIGEST-MD5 between Tenure and ZooKeeper's own Java client (Debian's zookeeper.jar, compiled
 * here from sasl-java/ZkSaslClient.java, its SASL configured through JAAS) on a real ZooKeeper 3.8
 * with JAAS (SaslZooKeeper): a `sasl:bob` ACL is enforced both ways. Java creates, Tenure as bob
 * reads and as alice (or unauthenticated) is refused; Tenure creates, Java as bob reads and as
 * alice (or without SASL) is refused. The Java client also authenticates against the embedded
 * server's SASL, where the same ACL holds. JVM-heavy, hence a slow suite.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SaslZooKeeper, realZooKeeper } from '@tenure/testing';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { AuthFailedError, NoAuthError, Perms, createClient, type ACL, type Client } from '@tenure/client';
import { QUICK_START_FLAGS, ZOOKEEPER_JARS, compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain(ZOOKEEPER_JARS);
const SOURCE = fileURLToPath(new URL('./sasl-java/ZkSaslClient.java', import.meta.url));
const BOB_ONLY: ACL[] = [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }];

describe.skipIf(!zk.available || !java.available)('SASL DIGEST-MD5: Tenure and the Java client', () => {
  let server: SaslZooKeeper;
  let compiled: CompiledJava;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava([SOURCE], ZOOKEEPER_JARS), SaslZooKeeper.start()]);
  }, 180_000);
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => {});
  });
  afterAll(async () => {
    await server?.close();
    compiled?.dispose();
  });

  /** A Java client on `connectString` with these JAAS flags; resolves once it printed ready/authfailed. */
  async function javaClient(connectString: string, flags: string[]): Promise<{ jvm: JavaProgram; outcome: string }> {
    const jvm = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'ZkSaslClient', args: [connectString], jvmFlags: [...QUICK_START_FLAGS, ...flags] },
      /^(ready|authfailed)$/,
      60_000,
    );
    closers.push(() => jvm.stop());
    return { jvm, outcome: jvm.lines.find((l) => /^(ready|authfailed)$/.test(l))! };
  }

  function tenure(connectString: string, user?: { username: string; password: string }): Client {
    const c = createClient({
      connectString,
      sessionTimeoutMs: 4000,
      connectionTimeoutMs: 8000,
      ...(user ? { sasl: { mechanism: 'DIGEST-MD5' as const, ...user } } : {}),
    });
    closers.push(() => c.close());
    return c;
  }

  it('Java as bob creates a sasl:bob node: Tenure as bob reads it, as alice and unauthenticated is refused', async () => {
    const { jvm, outcome } = await javaClient(server.connectString, server.javaClientFlags('bob'));
    expect(outcome).toBe('ready');
    expect(await jvm.ask('whoami', /^whoami /)).toBe('whoami ip:127.0.0.1,sasl:bob');
    expect(await jvm.ask('create /java-bob javadata sasl:bob', /^created /)).toBe('created /java-bob');

    const bob = tenure(server.connectString, { username: 'bob', password: 'bobsecret' });
    await bob.start();
    expect((await bob.getData('/java-bob')).data.toString()).toBe('javadata');
    expect((await bob.getACL('/java-bob')).acl).toEqual(BOB_ONLY);
    const alice = tenure(server.connectString, { username: 'alice', password: 'alicesecret' });
    await alice.start();
    await expect(alice.getData('/java-bob')).rejects.toBeInstanceOf(NoAuthError);
    const nobody = tenure(server.connectString);
    await nobody.start();
    await expect(nobody.getData('/java-bob')).rejects.toBeInstanceOf(NoAuthError);
  });

  it('Tenure as bob creates a sasl:bob node: Java as bob reads it, as alice and without SASL is refused', async () => {
    const bob = tenure(server.connectString, { username: 'bob', password: 'bobsecret' });
    await bob.start();
    await bob.create('/tenure-bob', 'tenuredata', { acl: BOB_ONLY });

    const javaBob = await javaClient(server.connectString, server.javaClientFlags('bob'));
    expect(await javaBob.jvm.ask('get /tenure-bob', /^(data|error) /)).toBe('data tenuredata');
    const javaAlice = await javaClient(server.connectString, server.javaClientFlags('alice'));
    expect(javaAlice.outcome).toBe('ready');
    expect(await javaAlice.jvm.ask('whoami', /^whoami /)).toBe('whoami ip:127.0.0.1,sasl:alice');
    expect(await javaAlice.jvm.ask('get /tenure-bob', /^(data|error) /)).toBe('error NOAUTH');
    const javaNone = await javaClient(server.connectString, server.javaClientFlags(null));
    expect(await javaNone.jvm.ask('get /tenure-bob', /^(data|error) /)).toBe('error NOAUTH');
  });

  it('a wrong password: the Java client gets AuthFailed, Tenure AuthFailedError at once', async () => {
    const javaBad = await javaClient(server.connectString, server.javaClientFlags('bob', 'wrong'));
    expect(javaBad.outcome).toBe('authfailed');
    const bad = tenure(server.connectString, { username: 'bob', password: 'wrong' });
    const t0 = performance.now();
    await expect(bad.start()).rejects.toBeInstanceOf(AuthFailedError);
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  describe('the Java client against the embedded server', () => {
    let embedded: EmbeddedServer;
    let connectString: string;
    beforeAll(async () => {
      embedded = createEmbeddedServer({ sasl: { users: { bob: 'bobsecret', alice: 'alicesecret' } } });
      ({ connectString } = await embedded.listen({ port: 0 }));
    });
    afterAll(async () => {
      await embedded?.close();
    });

    it('authenticates as sasl:bob; the sasl:bob ACL holds for Tenure as alice and Java as alice', async () => {
      const javaBob = await javaClient(connectString, server.javaClientFlags('bob'));
      expect(javaBob.outcome).toBe('ready');
      expect(await javaBob.jvm.ask('whoami', /^whoami /)).toBe('whoami ip:127.0.0.1,sasl:bob');
      expect(await javaBob.jvm.ask('create /java-bob javadata sasl:bob', /^created /)).toBe('created /java-bob');
      const alice = tenure(connectString, { username: 'alice', password: 'alicesecret' });
      await alice.start();
      await expect(alice.getData('/java-bob')).rejects.toBeInstanceOf(NoAuthError);
      const bob = tenure(connectString, { username: 'bob', password: 'bobsecret' });
      await bob.start();
      expect((await bob.getData('/java-bob')).data.toString()).toBe('javadata');
      const javaAlice = await javaClient(connectString, server.javaClientFlags('alice'));
      expect(await javaAlice.jvm.ask('get /java-bob', /^(data|error) /)).toBe('error NOAUTH');
    });

    it('refuses the Java client with a wrong password: it sees AuthFailed', async () => {
      const javaBad = await javaClient(connectString, server.javaClientFlags('bob', 'wrong'));
      expect(javaBad.outcome).toBe('authfailed');
      expect(await javaBad.jvm.ask('get /', /^(data|error) /)).toBe('error AUTHFAILED');
    });
  });
});
