/**
 * TestingCluster: a real 3-node (by default) Apache ZooKeeper ensemble on loopback, with the same
 * test settings as TestingServer. Servers are numbered from 0 in the order of `connectString`.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Transport } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { freePort } from './free-port.js';
import { parseServerDump, type ServerDump } from './server-dump.js';
import { ZooKeeperNode, makeWorkDir, removeWorkDir, type ZooKeeperSettings } from './zookeeper-node.js';
import { ClosedError, IllegalStateError, InvalidArgumentError } from '@tenure/protocol';

export interface TestingClusterOptions extends ZooKeeperSettings {
  /** Number of servers. Default 3. */
  size?: number;
  /**
   * Dynamic reconfiguration (ZooKeeper 3.5+): `reconfigEnabled=true`, `standaloneEnabled=false`
   * and a dynamic config file whose `server.N=` lines carry each server's client address
   * (`server.N=127.0.0.1:q:e:participant;127.0.0.1:clientPort`). Default false (a static zoo.cfg).
   */
  reconfigEnabled?: boolean;
  /**
   * A super user, `'user:password'`, for reconfig and ACL-free administration: ZooKeeper's
   * `zookeeper.DigestAuthenticationProvider.superDigest`. Clients authenticate with
   * `authInfo: [{ scheme: 'digest', auth: 'user:password' }]`.
   */
  superUser?: string;
  /** `zookeeper.skipACL=yes`: every ACL check passes (reconfig needs no super user then). */
  skipACL?: boolean;
}

/** Anything that says which server it is connected to, such as a Tenure client. */
export interface HasConnectedServer {
  readonly connectedServer: string | undefined | null;
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

export class TestingCluster {
  private closed = false;

  private constructor(
    private readonly nodes: ZooKeeperNode[],
    private readonly dir: string,
    private readonly serverLines: string[],
  ) {}

  /**
   * Server n's `server.<n+1>=host:quorumPort:electionPort[:participant;host:clientPort]` line as
   * the cluster was started with it, e.g. for `reconfig({ joining: [cluster.serverLine(0)] })`.
   */
  serverLine(n: number): string {
    this.node(n);
    return this.serverLines[n]!;
  }

  /** Server n's id in the ensemble (its myid): n + 1. */
  serverId(n: number): string {
    this.node(n);
    return String(n + 1);
  }

  /** Starts the ensemble and resolves once every server serves (one leader, the others following). */
  static async start(options: TestingClusterOptions = {}): Promise<TestingCluster> {
    const size = options.size ?? 3;
    if (size < 1) throw new InvalidArgumentError('a cluster needs at least one server');
    const dir = makeWorkDir('tenure-zk-cluster-');
    const ports = await distinctFreePorts(size * 3);
    const dynamic = options.reconfigEnabled === true;
    const servers = Array.from({ length: size }, (_, i) =>
      serverLine(i + 1, ports[3 * i + 1]!, ports[3 * i + 2]!, dynamic ? ports[3 * i] : undefined),
    );
    const systemProperties = { ...options.systemProperties };
    if (options.superUser !== undefined)
      systemProperties['zookeeper.DigestAuthenticationProvider.superDigest'] = superDigest(options.superUser);
    if (options.skipACL) systemProperties['zookeeper.skipACL'] = 'yes';
    const nodes = Array.from(
      { length: size },
      (_, i) =>
        new ZooKeeperNode(
          { dir: makeNodeDir(dir, i), clientPort: ports[3 * i]!, quorum: { myid: i + 1, servers, dynamic } },
          {
            ...options,
            systemProperties,
            // Without reconfig, zoo.cfg stays static; quorum listen on loopback only.
            config: {
              reconfigEnabled: dynamic,
              ...(dynamic ? { standaloneEnabled: false } : {}),
              quorumListenOnAllIPs: false,
              cnxTimeout: 1000,
              ...options.config,
            },
          },
        ),
    );
    const cluster = new TestingCluster(nodes, dir, servers);
    try {
      for (const node of nodes) node.start();
      await Promise.all(nodes.map((n) => n.waitServing()));
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }

  get size(): number {
    return this.nodes.length;
  }

  /** 'h:p,h:p,h:p' for every server. */
  get connectString(): string {
    return this.nodes.map((n) => n.address).join(',');
  }

  /** A transport to this server over TCP (`zookeeper(connectString)`). */
  transport(): Transport {
    return zookeeper(this.connectString);
  }

  /** The `host:port` of server n. */
  address(n: number): string {
    return this.node(n).address;
  }

  /** The servers' `host:port`, in order. */
  get addresses(): string[] {
    return this.nodes.map((n) => n.address);
  }

  running(n: number): boolean {
    return this.node(n).running;
  }

  /** Kills server n (SIGKILL, as a crash would); its data stays for restartServer. */
  async killServer(n: number): Promise<void> {
    await this.node(n).kill();
  }

  /**
   * Starts server n again. By default waits until it serves, which needs a quorum: pass
   * `{ wait: false }` when restarting servers one at a time out of a lost quorum.
   */
  async restartServer(n: number, { wait = true }: { wait?: boolean } = {}): Promise<void> {
    if (this.closed) throw new ClosedError('TestingCluster');
    const node = this.node(n);
    await node.kill();
    node.start();
    if (wait) await node.waitServing();
  }

  /** Waits until every running server serves. */
  async waitServing(timeoutMs?: number): Promise<void> {
    await Promise.all(this.nodes.filter((n) => n.running).map((n) => n.waitServing(timeoutMs)));
  }

  /** The index of the server a client is connected to (from `client.connectedServer`), or -1. */
  serverOf(client: HasConnectedServer | string | undefined | null): number {
    const server = typeof client === 'string' || client == null ? client : client.connectedServer;
    if (!server) return -1;
    return this.nodes.findIndex((node) => node.address === server);
  }

  /** Index of the current leader, or -1 if none answers. */
  async leader(): Promise<number> {
    const modes = await Promise.all(this.nodes.map((n) => (n.running ? n.mode() : Promise.resolve(undefined))));
    return modes.indexOf('leader');
  }

  /** `srvr`'s mode per server (leader, follower) or undefined when not serving. */
  async modes(): Promise<(string | undefined)[]> {
    return Promise.all(this.nodes.map((n) => (n.running ? n.mode() : Promise.resolve(undefined))));
  }

  /** Sessions, ephemerals and watches as seen by server n (default: the leader, which tracks every global session). */
  async dump(n?: number): Promise<ServerDump> {
    const at = n ?? (await this.leader());
    if (at < 0) throw new IllegalStateError('no serving leader to dump');
    const node = this.node(at);
    const [dump, wchc] = await Promise.all([node.fourLetterWord('dump'), node.fourLetterWord('wchc')]);
    return parseServerDump(dump, wchc);
  }

  fourLetterWord(n: number, word: string): Promise<string> {
    return this.node(n).fourLetterWord(word);
  }

  /** Stops every server and deletes all data. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.nodes.map((n) => n.kill()));
    removeWorkDir(this.dir);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private node(n: number): ZooKeeperNode {
    const node = this.nodes[n];
    if (!node) throw new InvalidArgumentError(`no server ${n} in a cluster of ${this.nodes.length}`);
    return node;
  }
}

function serverLine(id: number, quorumPort: number, electionPort: number, clientPort: number | undefined): string {
  const base = `server.${id}=127.0.0.1:${quorumPort}:${electionPort}`;
  return clientPort === undefined ? base : `${base}:participant;127.0.0.1:${clientPort}`;
}

/** ZooKeeper's superDigest for 'user:password': user:base64(sha1('user:password')). */
function superDigest(userPassword: string): string {
  const colon = userPassword.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError(`superUser must be 'user:password', got ${JSON.stringify(userPassword)}`);
  return `${userPassword.slice(0, colon)}:${createHash('sha1').update(userPassword).digest('base64')}`;
}

function makeNodeDir(root: string, i: number): string {
  return join(root, `server${i}`);
}
