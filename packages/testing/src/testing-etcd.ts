/**
 * TestingEtcd: one etcd member (Debian's etcd 3.4) on free ports with a temporary data dir, for
 * tests; TestingEtcdCluster: three members that can be killed and restarted one by one. In the
 * style of TestingServer and TestingCluster. Never 2379: a system etcd may sit there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, closeSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IllegalStateError, TimeoutError } from '@tenure/protocol';
import { freePort } from './free-port.js';

export interface TestingEtcdOptions {
  /** Extra etcd flags, e.g. ['--max-txn-ops=4096']. Default: --max-txn-ops=4096, as the README asks of operators. */
  flags?: string[];
  /** The etcd binary. Default 'etcd' on the PATH. */
  binary?: string;
  /** How long a start may take. Default 20,000 ms. */
  startTimeoutMs?: number;
  /**
   * Serve clients over TLS (https://) with these PEM files, and require a client certificate
   * signed by `ca` (etcd's --client-cert-auth). tls-certificates.ts makes a set.
   */
  tls?: { cert: string; key: string; ca: string };
}

interface Member {
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  process: ChildProcess | undefined;
}

const DEFAULT_FLAGS = ['--max-txn-ops=4096'];

/** GET /health: etcd's answer, over TLS with the client certificate when etcd serves TLS. */
function health(port: number, tls: TestingEtcdOptions['tls']): Promise<boolean> {
  const files = tls === undefined ? {} : { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key) };
  const get = tls === undefined ? httpGet : httpsGet;
  return new Promise((resolve, reject) => {
    const req = get(
      `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/health`,
      { ...files, servername: '', timeout: 1000 },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve(res.statusCode === 200 && (JSON.parse(body) as { health?: string }).health === 'true'));
      },
    );
    req.on('timeout', () => req.destroy(new TimeoutError(`etcd on port ${port}: /health gave no answer within 1000 ms`, 1000)));
    req.on('error', reject);
  });
}

async function healthy(port: number, options: TestingEtcdOptions, proc: () => ChildProcess | undefined): Promise<void> {
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const p = proc();
    if (p === undefined || p.exitCode !== null) throw new IllegalStateError(`etcd on port ${port} exited while starting`);
    try {
      if (await health(port, options.tls)) return;
    } catch {
      // not up yet
    }
    if (Date.now() > until) throw new TimeoutError(`etcd on port ${port} not healthy within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

class EtcdMembers {
  constructor(
    readonly members: Member[],
    private readonly root: string,
    readonly options: TestingEtcdOptions,
  ) {}

  url(m: Member): string {
    return `${this.options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${m.clientPort}`;
  }

  private cluster(): string {
    return this.members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  }

  spawn(m: Member, state: 'new' | 'existing'): void {
    const log = openSync(join(this.root, `${m.name}.log`), 'a');
    const tls = this.options.tls;
    const scheme = tls === undefined ? 'http' : 'https';
    const args = [
      `--name=${m.name}`,
      `--data-dir=${m.dataDir}`,
      `--listen-client-urls=${scheme}://127.0.0.1:${m.clientPort}`,
      `--advertise-client-urls=${scheme}://127.0.0.1:${m.clientPort}`,
      ...(tls === undefined
        ? []
        : [`--cert-file=${tls.cert}`, `--key-file=${tls.key}`, `--trusted-ca-file=${tls.ca}`, '--client-cert-auth']),
      `--listen-peer-urls=http://127.0.0.1:${m.peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${m.peerPort}`,
      `--initial-cluster=${this.cluster()}`,
      `--initial-cluster-state=${state}`,
      `--initial-cluster-token=tenure-${this.members[0]!.clientPort}`,
      ...(this.options.flags ?? DEFAULT_FLAGS),
    ];
    m.process = spawn(this.options.binary ?? 'etcd', args, { stdio: ['ignore', log, log] });
    closeSync(log);
    const proc = m.process;
    proc.on('exit', () => {
      if (m.process === proc) m.process = undefined;
    });
  }

  async waitHealthy(m: Member): Promise<void> {
    await healthy(m.clientPort, this.options, () => m.process);
  }

  async stop(m: Member, signal: NodeJS.Signals): Promise<void> {
    const p = m.process;
    if (p === undefined || p.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill(signal);
    });
    m.process = undefined;
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => this.stop(m, 'SIGKILL')));
    rmSync(this.root, { recursive: true, force: true });
  }
}

async function makeMembers(n: number, options: TestingEtcdOptions): Promise<EtcdMembers> {
  const root = mkdtempSync(join(tmpdir(), 'tenure-etcd-'));
  const members: Member[] = [];
  for (let i = 0; i < n; i++) {
    members.push({
      name: `m${i + 1}`,
      clientPort: await freePort(),
      peerPort: await freePort(),
      dataDir: join(root, `m${i + 1}`),
      process: undefined,
    });
  }
  return new EtcdMembers(members, root, options);
}

/** One etcd member on free ports; stop/kill keep its data dir, restart brings it back on the same ports. */
export class TestingEtcd {
  private constructor(private readonly m: EtcdMembers) {}

  static async start(options: TestingEtcdOptions = {}): Promise<TestingEtcd> {
    const m = await makeMembers(1, options);
    m.spawn(m.members[0]!, 'new');
    try {
      await m.waitHealthy(m.members[0]!);
    } catch (err) {
      await m.close();
      throw err;
    }
    return new TestingEtcd(m);
  }

  /** The client URL, `http://127.0.0.1:<port>` (`https://` with `tls`). */
  get endpoint(): string {
    return this.m.url(this.m.members[0]!);
  }

  get running(): boolean {
    return this.m.members[0]!.process !== undefined;
  }

  /** Stops it gracefully (SIGTERM). */
  async stop(): Promise<void> {
    await this.m.stop(this.m.members[0]!, 'SIGTERM');
  }

  /** SIGKILL. */
  async kill(): Promise<void> {
    await this.m.stop(this.m.members[0]!, 'SIGKILL');
  }

  /** Starts it again on the same ports and data dir; resolves once healthy. */
  async restart(): Promise<void> {
    const member = this.m.members[0]!;
    await this.m.stop(member, 'SIGTERM');
    this.m.spawn(member, 'new');
    await this.m.waitHealthy(member);
  }

  async close(): Promise<void> {
    await this.m.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Three etcd members on free ports; any one can be killed and restarted. */
export class TestingEtcdCluster {
  private constructor(private readonly m: EtcdMembers) {}

  static async start(options: TestingEtcdOptions & { size?: number } = {}): Promise<TestingEtcdCluster> {
    const m = await makeMembers(options.size ?? 3, options);
    for (const member of m.members) m.spawn(member, 'new');
    try {
      await Promise.all(m.members.map((member) => m.waitHealthy(member)));
    } catch (err) {
      await m.close();
      throw err;
    }
    return new TestingEtcdCluster(m);
  }

  /** Every member's client URL. */
  get endpoints(): string[] {
    return this.m.members.map((x) => this.m.url(x));
  }

  get size(): number {
    return this.m.members.length;
  }

  running(i: number): boolean {
    return this.m.members[i]!.process !== undefined;
  }

  /** SIGKILLs member i. */
  async kill(i: number): Promise<void> {
    await this.m.stop(this.m.members[i]!, 'SIGKILL');
  }

  /** Starts member i again with its data dir; resolves once it is healthy (the cluster has a leader). */
  async restart(i: number): Promise<void> {
    const member = this.m.members[i]!;
    await this.m.stop(member, 'SIGKILL');
    this.m.spawn(member, 'existing');
    await this.m.waitHealthy(member);
  }

  async close(): Promise<void> {
    await this.m.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
