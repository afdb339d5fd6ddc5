/**
 * TestingServer: a real standalone Apache ZooKeeper (Debian's `zookeeper` package) on a free
 * loopback port, with test settings (tickTime 200, forceSync=no, extended types, all four-letter
 * words, no connection limit, no admin server).
 */
import { join } from 'node:path';
import type { Transport } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { freePort } from './free-port.js';
import { parseServerDump, type ServerDump } from './server-dump.js';
import { ZooKeeperNode, makeWorkDir, removeWorkDir, type ZooKeeperSettings } from './zookeeper-node.js';
import { ClosedError } from '@tenure/protocol';

export interface TestingServerOptions extends ZooKeeperSettings {
  /** A fixed client port; default a free one. */
  port?: number;
}

export class TestingServer {
  private closed = false;

  private constructor(
    private readonly node: ZooKeeperNode,
    private readonly dir: string,
  ) {}

  /** Starts a server and resolves once it serves. */
  static async start(options: TestingServerOptions = {}): Promise<TestingServer> {
    // A free port can be taken by someone else before Java binds it: retry with another.
    for (let attempt = 1; ; attempt++) {
      const dir = makeWorkDir('tenure-zk-');
      const port = options.port ?? (await freePort());
      const node = new ZooKeeperNode({ dir, clientPort: port }, options);
      try {
        node.start();
        await node.waitServing();
        return new TestingServer(node, dir);
      } catch (error) {
        await node.kill();
        removeWorkDir(dir);
        if (attempt >= 3 || options.port !== undefined || !/Address already in use|BindException/.test(String(error))) throw error;
      }
    }
  }

  /** '127.0.0.1:<port>'. */
  get connectString(): string {
    return this.node.address;
  }

  /** A transport to this server over TCP (`zookeeper(connectString)`). */
  transport(): Transport {
    return zookeeper(this.connectString);
  }

  get port(): number {
    return this.node.spec.clientPort;
  }

  /** The server's folder (zoo.cfg, data/, zookeeper.log). */
  get directory(): string {
    return this.dir;
  }

  get logFile(): string {
    return join(this.dir, 'zookeeper.log');
  }

  get running(): boolean {
    return this.node.running;
  }

  /** Kills the server (as a crash would). Sessions and data survive in its data directory. */
  async stop(): Promise<void> {
    await this.node.kill();
  }

  /** Starts the server again on the same port with the same data; resolves once it serves. */
  async restart(): Promise<void> {
    if (this.closed) throw new ClosedError('TestingServer');
    await this.node.kill();
    this.node.start();
    await this.node.waitServing();
  }

  /** Stops the server and deletes its data. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.node.kill();
    removeWorkDir(this.dir);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Sessions with their ephemerals and watched paths, via the four-letter words dump and wchc. */
  async dump(): Promise<ServerDump> {
    const [dump, wchc] = await Promise.all([this.node.fourLetterWord('dump'), this.node.fourLetterWord('wchc')]);
    return parseServerDump(dump, wchc);
  }

  /** Any four-letter word, e.g. 'mntr', 'cons', 'srvr'. */
  fourLetterWord(word: string): Promise<string> {
    return this.node.fourLetterWord(word);
  }
}
