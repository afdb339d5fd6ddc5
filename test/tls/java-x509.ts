/**
 * Runs test/tls/java/X509Tool.java (Java's single-file launch) against Debian's jars: Java's own
 * X500Principal.getName() of certificates, and a Java ZooKeeper client over TLS creating a node.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NETTY_JARS, findZooKeeper } from '@tenure/testing';

const run = promisify(execFile);
const TOOL = fileURLToPath(new URL('./java/X509Tool.java', import.meta.url));
export const JAVA_TLS_CLASSPATH = ['/usr/share/java/zookeeper.jar', ...NETTY_JARS, '/usr/share/java/slf4j-simple.jar'].join(':');

/** Runs X509Tool with `args` (and JVM `flags`) and returns its stdout lines. */
export async function x509Tool(args: string[], flags: string[] = []): Promise<string[]> {
  const { java } = findZooKeeper();
  const { stdout } = await run(
    java,
    [
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      ...flags,
      '-cp',
      JAVA_TLS_CLASSPATH,
      TOOL,
      ...args,
    ],
    { timeout: 60_000 },
  );
  return stdout.split('\n').filter((l) => l !== '');
}
