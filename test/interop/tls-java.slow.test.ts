/**
 * Real Java clients over TLS against the embedded server's TLS listener (client certificate
 * required): ZooKeeper's zkCli (Debian's zkCli.sh with the Netty client socket and the PKCS12
 * stores) and Apache Curator run create/get/set/delete, their certificate makes them `x509`
 * identities, and three InterProcessMutex workers x 30 unsafe increments land at exactly 90.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { CLIENT_X509_ID, NETTY_JARS, javaClientFlags, makeTlsCertificates, realZooKeeper, type TlsCertificates } from '@tenure/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileJava, javaToolchain, JavaProgram, QUICK_START_FLAGS, type CompiledJava } from './java.js';

const ZKCLI = '/usr/share/zookeeper/bin/zkCli.sh';
const zk = realZooKeeper();
const java = javaToolchain();
const CHECK = fileURLToPath(new URL('./java/CuratorTlsCheck.java', import.meta.url));
const ZK_CLASSPATH = ['/etc/zookeeper/conf', '/usr/share/java/zookeeper.jar', ...NETTY_JARS, '/usr/share/java/slf4j-simple.jar'].join(':');

/** zkCli.sh over TLS: commands on stdin, stdout and stderr together back. */
function zkCliTls(
  server: string,
  certs: TlsCertificates,
  commands: string[],
  timeoutMs = 45_000,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [ZKCLI, '-server', server], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // zkEnv.sh hard-codes CLASSPATH without the Netty jars; the last -cp on the command line wins.
        CLIENT_JVMFLAGS: ['-cp', ZK_CLASSPATH, ...javaClientFlags(certs)].join(' '),
        JVMFLAGS: '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -Xmx128m',
      },
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`zkCli.sh did not finish within ${timeoutMs} ms; output so far:\n${output}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdin.end(commands.join('\n') + '\n');
  });
}

describe.skipIf(!zk.available || !java.available || !existsSync(ZKCLI))('Java clients over TLS against the embedded TLS listener', () => {
  let server: EmbeddedServer;
  let dir: string;
  let certs: TlsCertificates;
  let connectString: string;
  const warnings: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tenure-tls-java-'));
    certs = await makeTlsCertificates(dir);
    server = createEmbeddedServer({
      tickMs: 200,
      logger: { warn: (obj, msg) => warnings.push(`${msg ?? ''} ${String((obj as { err?: Error })?.err ?? '')}`) },
    });
    ({ connectString } = await server.listen({ port: 0, tls: certs.serverOptions() }));
  });
  afterAll(async () => {
    expect(warnings).toEqual([]);
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('zkCli: create, get, set, get, delete and whoami over TLS', async () => {
    const { output } = await zkCliTls(connectString, certs, [
      'create /tls hello',
      'get /tls',
      'set /tls world',
      'get /tls',
      'whoami',
      'create /tls/child c',
      'delete /tls/child',
      'delete /tls',
      'ls /',
      'quit',
    ]);
    expect(output).toContain('WatchedEvent state:SyncConnected type:None path:null');
    expect(output).toMatch(/^Created \/tls$/m);
    const lines = output.split('\n');
    expect(lines.indexOf('world')).toBeGreaterThan(lines.indexOf('hello'));
    expect(lines.indexOf('hello')).toBeGreaterThan(-1);
    expect(output).toMatch(new RegExp(`^x509: ${CLIENT_X509_ID}$`, 'm'));
    expect(output).toMatch(/^\[zookeeper\]$/m);
    expect(server.node('/tls')).toBeUndefined();
    await expect.poll(() => server.sessions()).toEqual([]);
  });

  describe('Curator', () => {
    let compiled: CompiledJava;
    let curator: JavaProgram;
    beforeAll(async () => {
      compiled = await compileJava([CHECK]);
      curator = await JavaProgram.start(
        {
          classpath: [compiled.classpath, ...NETTY_JARS].join(':'),
          mainClass: 'CuratorTlsCheck',
          args: [connectString],
          jvmFlags: [...QUICK_START_FLAGS, ...javaClientFlags(certs)],
        },
        /^ready$/,
      );
    });
    afterAll(async () => {
      await curator?.stop();
      compiled?.dispose();
    });

    test('create/get/set/delete, and the client certificate is its x509 identity', async () => {
      expect(await curator.ask('crud /curator/tls', /^crud /)).toBe('crud one two false');
      expect(await curator.ask('whoami', /^whoami /)).toBe(`whoami x509:${CLIENT_X509_ID} ip:127.0.0.1`);
    });

    test('three InterProcessMutex workers x 30 unsafe increments = exactly 90, one holder at a time', async () => {
      expect(await curator.ask('count /locks/tls /tls-counter 3 30', /^counted /, 90_000)).toBe('counted 90 1');
      expect(server.node('/tls-counter')?.data?.toString()).toBe('90');
      expect(server.node('/locks/tls')?.children ?? []).toEqual([]);
    });
  });
});
