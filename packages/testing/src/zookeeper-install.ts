/**
 * Finding a Java runtime and Apache ZooKeeper (Debian's `zookeeper` package) on this machine.
 * The jar's manifest Class-Path pulls in its dependencies, so `-cp zookeeper.jar` is enough.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TenureError } from '@tenure/protocol';

/** Thrown when Java or ZooKeeper is missing; the message names the apt package to install. */
export class ZooKeeperUnavailableError extends TenureError {
  override name = 'ZooKeeperUnavailableError';
  constructor(message = 'Java or ZooKeeper is not installed') {
    super('ZOOKEEPER_UNAVAILABLE', message);
  }
}

export interface ZooKeeperInstallation {
  /** The java executable. */
  java: string;
  /** The class path: ZooKeeper's jar plus an slf4j binding when one is installed. */
  classpath: string;
}

const ZOOKEEPER_JARS = ['/usr/share/java/zookeeper.jar', '/usr/share/zookeeper/zookeeper.jar'];
const SLF4J_SIMPLE = '/usr/share/java/slf4j-simple.jar';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findJava(env: NodeJS.ProcessEnv): string | undefined {
  const home = env.JAVA_HOME;
  if (home && executable(join(home, 'bin', 'java'))) return join(home, 'bin', 'java');
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'java'))) return join(dir, 'java');
  }
  return undefined;
}

/**
 * Looks for Java (JAVA_HOME, then PATH) and ZooKeeper's jar (`TENURE_ZOOKEEPER_JAR`, then Debian's
 * locations); returns the installation or the error naming what to install. Not cached.
 */
export function locateZooKeeper(
  env: NodeJS.ProcessEnv = process.env,
  jars: readonly string[] = ZOOKEEPER_JARS,
): ZooKeeperInstallation | ZooKeeperUnavailableError {
  const java = findJava(env);
  const jar = [env.TENURE_ZOOKEEPER_JAR, ...jars].find((p): p is string => !!p && existsSync(p));
  if (!java) {
    return new ZooKeeperUnavailableError(
      'java not found (JAVA_HOME, PATH): install the Debian package `zookeeper` (apt-get install zookeeper), which pulls in a Java runtime',
    );
  }
  if (!jar) {
    return new ZooKeeperUnavailableError(
      `Apache ZooKeeper not found (${jars.join(', ') || 'no candidate jar'}): install the Debian package \`zookeeper\` (apt-get install zookeeper)`,
    );
  }
  return { java, classpath: existsSync(SLF4J_SIMPLE) ? `${jar}:${SLF4J_SIMPLE}` : jar };
}

let cached: ZooKeeperInstallation | ZooKeeperUnavailableError | undefined;

/** The local installation (cached), or throws ZooKeeperUnavailableError naming the apt package to install. */
export function findZooKeeper(): ZooKeeperInstallation {
  cached ??= locateZooKeeper();
  if (cached instanceof Error) throw cached;
  return cached;
}

export type ZooKeeperAvailability = { available: true; reason?: undefined } | { available: false; reason: string };

let warned = false;

/**
 * Whether real-ZooKeeper tests can run here. Locally a missing installation is reported once on
 * stderr with the reason, so a skipped suite says why; with `CI=true` it throws instead, because a
 * skip in CI is a failure.
 */
export function realZooKeeper(env: NodeJS.ProcessEnv = process.env): ZooKeeperAvailability {
  const found = env === process.env ? (cached ??= locateZooKeeper()) : locateZooKeeper(env);
  if (!(found instanceof Error)) return { available: true };
  if (env.CI === 'true' || env.CI === '1') throw found;
  if (!warned && env === process.env) {
    warned = true;
    process.stderr.write(`[tenure/testing] skipping real-ZooKeeper tests: ${found.message}\n`);
  }
  return { available: false, reason: found.message };
}
