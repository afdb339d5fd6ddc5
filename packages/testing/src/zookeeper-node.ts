/**
 * One Apache ZooKeeper server process with a generated zoo.cfg: the building block of
 * TestingServer (standalone) and TestingCluster (one node of an ensemble).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fourLetterWord } from './four-letter-words.js';
import { JavaProcess } from './java-process.js';
import { findZooKeeper } from './zookeeper-install.js';
import { TenureError, TimeoutError } from '@tenure/protocol';

/** Settings shared by TestingServer and TestingCluster. */
export interface ZooKeeperSettings {
  /** ZooKeeper's tick, ms. Default 200. Session timeouts are negotiated within [2, 20] ticks by default. */
  tickTime?: number;
  /** Default 2 × tickTime. */
  minSessionTimeout?: number;
  /** Default 20 × tickTime. */
  maxSessionTimeout?: number;
  /** Extra zoo.cfg lines. */
  config?: Record<string, string | number | boolean>;
  /** Extra JVM system properties (-Dkey=value). */
  systemProperties?: Record<string, string | number | boolean>;
  /**
   * Extra JVM flags, after the defaults (later flags win): e.g. `['-XX:TieredStopAtLevel=4']` restores
   * the optimising JIT for a long benchmark; the default stops at C1 for a fast start.
   */
  jvmFlags?: string[];
  /** Jars appended to the class path (e.g. netty-codec and netty-resolver for the Netty factory). */
  classpath?: string[];
  /** slf4j-simple level for the server log (`<dir>/zookeeper.log`). Default 'warn'. */
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'off';
  /** How long to wait for the server to serve, ms. Default 60000. */
  startTimeoutMs?: number;
}

/** A new temp folder, on /dev/shm where present (RAM: fast snapshots, no disk wear). */
export function makeWorkDir(prefix: string): string {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return mkdtempSync(join(base, prefix));
}

export function removeWorkDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface NodeSpec {
  /** Folder for zoo.cfg, data and the log. */
  dir: string;
  clientPort: number;
  /**
   * For an ensemble member: its myid and the `server.N=` lines. With `dynamic`, the lines go to a
   * dynamic config file (ZooKeeper 3.5+ reconfig) and carry the client address, so zoo.cfg has
   * no clientPort of its own.
   */
  quorum?: { myid: number; servers: string[]; dynamic?: boolean };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ZooKeeperNode {
  readonly host = '127.0.0.1';
  private process: JavaProcess | undefined;

  constructor(
    readonly spec: NodeSpec,
    private readonly settings: ZooKeeperSettings,
  ) {
    const tick = settings.tickTime ?? 200;
    const cfg: Record<string, string | number | boolean> = {
      tickTime: tick,
      initLimit: 10,
      syncLimit: 5,
      dataDir: join(spec.dir, 'data'),
      ...(spec.quorum?.dynamic
        ? { dynamicConfigFile: join(spec.dir, 'zoo.cfg.dynamic') }
        : { clientPort: spec.clientPort, clientPortAddress: this.host }),
      forceSync: 'no',
      '4lw.commands.whitelist': '*',
      maxClientCnxns: 0,
      'admin.enableServer': false,
      minSessionTimeout: settings.minSessionTimeout ?? 2 * tick,
      maxSessionTimeout: settings.maxSessionTimeout ?? 20 * tick,
      // No periodic snapshot purge in tests; a short-lived server never needs it.
      'autopurge.purgeInterval': 0,
      ...settings.config,
    };
    mkdirSync(cfg.dataDir as string, { recursive: true });
    let text = Object.entries(cfg)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n');
    if (spec.quorum?.dynamic) {
      writeFileSync(join(spec.dir, 'zoo.cfg.dynamic'), spec.quorum.servers.join('\n') + '\n');
      writeFileSync(join(cfg.dataDir as string, 'myid'), `${spec.quorum.myid}\n`);
    } else if (spec.quorum) {
      text += '\n' + spec.quorum.servers.join('\n');
      writeFileSync(join(cfg.dataDir as string, 'myid'), `${spec.quorum.myid}\n`);
    }
    writeFileSync(this.configFile, text + '\n');
  }

  get configFile(): string {
    return join(this.spec.dir, 'zoo.cfg');
  }

  get logFile(): string {
    return join(this.spec.dir, 'zookeeper.log');
  }

  get address(): string {
    return `${this.host}:${this.spec.clientPort}`;
  }

  get running(): boolean {
    return this.process?.running ?? false;
  }

  /** Starts the JVM; resolves when it listens (not necessarily serving: see waitServing). */
  start(): void {
    if (this.running) return;
    const { java, classpath } = findZooKeeper();
    const props: Record<string, string | number | boolean> = {
      'zookeeper.extendedTypesEnabled': true,
      'znode.container.checkIntervalMs': 100,
      'org.slf4j.simpleLogger.defaultLogLevel': this.settings.logLevel ?? 'warn',
      'org.slf4j.simpleLogger.showDateTime': true,
      'zookeeper.jmx.log4j.disable': true,
      ...this.settings.systemProperties,
    };
    const mainClass = this.spec.quorum
      ? 'org.apache.zookeeper.server.quorum.QuorumPeerMain'
      : 'org.apache.zookeeper.server.ZooKeeperServerMain';
    this.process = new JavaProcess({
      java,
      cwd: this.spec.dir,
      logFile: this.logFile,
      args: [
        '-Xmx256m',
        // A test server is short-lived: skip the optimising JIT tiers and use the small collector.
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-Xss512k',
        ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`),
        ...(this.settings.jvmFlags ?? []),
        '-cp',
        [classpath, ...(this.settings.classpath ?? [])].join(':'),
        mainClass,
        this.configFile,
      ],
    });
  }

  /** The `Mode:` line of `srvr` (standalone, leader, follower), or undefined while not serving. */
  async mode(timeoutMs = 2000): Promise<string | undefined> {
    try {
      const text = await fourLetterWord(this.host, this.spec.clientPort, 'srvr', timeoutMs);
      return /^Mode: (\S+)/m.exec(text)?.[1];
    } catch {
      return undefined;
    }
  }

  /** Waits until `srvr` reports a serving mode; throws with the log tail if the JVM died or the wait timed out. */
  async waitServing(timeoutMs = this.settings.startTimeoutMs ?? 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (let delay = 25; ; delay = Math.min(delay * 2, 200)) {
      if (!this.running) {
        throw new TenureError('SERVER_EXITED', `ZooKeeper on ${this.address} exited during startup:\n${this.process?.logTail() ?? ''}`);
      }
      const mode = await this.mode(1000);
      if (mode) return mode;
      if (Date.now() > deadline) {
        throw new TimeoutError(
          `ZooKeeper on ${this.address} not serving after ${timeoutMs} ms:\n${this.process?.logTail() ?? ''}`,
          timeoutMs,
        );
      }
      await sleep(delay);
    }
  }

  /** Kills the JVM (SIGKILL: a crash, not a clean shutdown). The data stays for a restart. */
  async kill(): Promise<void> {
    await this.process?.kill();
  }

  fourLetterWord(word: string, timeoutMs?: number): Promise<string> {
    return fourLetterWord(this.host, this.spec.clientPort, word, timeoutMs);
  }
}
