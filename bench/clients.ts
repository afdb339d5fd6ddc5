/**
 * Tenure's client against its peers, and the embedded server against Apache ZooKeeper: same
 * workload, same servers, one invocation.
 *
 *   npx tsx bench/clients.ts [--seconds 2] [--rounds 5] [--in-flight 200] [--payload 100] [--warmup 2] [--no-java] [--no-tls]
 *                            [--cpu-prof <dir>]   (V8 CPU profiles of the Node workers and the embedded server)
 *                            [--embedded-only]    (no ZooKeeper, no Java: the embedded rows alone, for quick A/B runs)
 *                            [--clients Tenure,nzc,Java]   (only these clients, e.g. a server profile of Tenure's traffic alone)
 *                            [--transports tcp,ws,tls]     (only the columns over these transports)
 *
 * Peers: Tenure (@tenure/client over @tenure/zookeeper, and over @tenure/ws against the embedded
 * server's WebSocket listener: column "embedded (WS)"), node-zookeeper-client (npm) and the Java
 * ZooKeeper client (Debian's zookeeper.jar 3.8, bench/java/ZkGetDataBench.java compiled here).
 * Servers: Apache ZooKeeper 3.8 (Debian's, via TestingServer: standalone, loopback, full JIT,
 * forceSync=no) and Tenure's embedded server over TCP (`server.listen()`, in its own process).
 * TLS columns (unless --no-tls): a second ZooKeeper with the Netty factory (which TLS needs) and
 * its secureClientPort (TLS 1.2, client certificate required), and the embedded server's TLS
 * listener (TLS 1.3, client certificate required); Tenure and the Java client (Netty socket)
 * connect with the client certificate; node-zookeeper-client has no TLS. A column is a `Column`
 * (name, address, transport), so a transport is one more entry in `columns`.
 *
 * Every (client, server) pair is one long-lived worker process with one session, so JIT state is
 * kept across rounds and no worker shares a process with a server or another client. Workers run
 * one at a time; each gets the same warm-up first, then every round runs every worker once, in an
 * order rotated per round (interleaved), and the table reports the median of the rounds.
 *
 * Workloads:
 * - pipelined getData of one node (payload bytes), `in-flight` requests outstanding: each reply
 *   issues the next request until time is up, then the outstanding ones drain. ops/s and the
 *   client process's CPU per op (process.cpuUsage; the JVM's process CPU time for Java).
 * - sequential create + delete of a node, one request at a time: pairs/s (2 round trips each).
 *
 * The packages are imported from their TypeScript sources (bench/tsconfig.json maps @tenure/*),
 * so this measures the code as it is, without a build.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const TSCONFIG = fileURLToPath(new URL('./tsconfig.json', import.meta.url));

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}

async function main(): Promise<void> {
  const role = arg('role', 'orchestrator');
  if (role === 'server') return serveEmbedded();
  if (role === 'worker')
    return runWorker(
      arg('client', ''),
      arg('connect', ''),
      arg('path', ''),
      Number(arg('payload', '100')),
      Number(arg('in-flight', '200')),
    );
  return orchestrate();
}

// ---------------------------------------------------------------------------------------------
// The embedded server's process

async function serveEmbedded(): Promise<void> {
  const { createEmbeddedServer } = await import('@tenure/server');
  const server = createEmbeddedServer({ tickMs: 2000 });
  const { connectString } = await server.listen({ port: 0 });
  const ws = await server.listen({ port: 0, webSocket: {} });
  const tlsDir = arg('tls-dir', '');
  let secure = '-';
  if (tlsDir) {
    const { makeTlsCertificates } = await import('@tenure/testing');
    secure = (await server.listen({ port: 0, tls: (await makeTlsCertificates(tlsDir)).serverOptions() })).connectString;
  }
  console.log(`listening ${connectString} ${ws.url} ${secure}`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line === 'cpu') {
      const u = process.cpuUsage();
      console.log(`cpu ${u.user + u.system}`);
    }
  });
  lines.on('close', () => {
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Node workers: the same protocol as bench/java/ZkGetDataBench.java

interface Peer {
  /** One pipelined getData run; resolves the number of replies. */
  getData(inFlight: number, stopped: () => boolean): Promise<number>;
  /** Sequential create + delete pairs until stopped. */
  createDelete(stopped: () => boolean): Promise<number>;
  close(): Promise<void>;
}

async function tenurePeer(connectString: string, path: string, payload: Buffer, tlsDir: string, overWebSocket = false): Promise<Peer> {
  const { createClient } = await import('@tenure/client');
  const { NodeExistsError } = await import('@tenure/protocol');
  const transport = overWebSocket ? (await import('@tenure/ws')).webSocket(connectString) : undefined;
  const tls = tlsDir ? (await (await import('@tenure/testing')).makeTlsCertificates(tlsDir)).clientOptions() : undefined;
  const client = createClient(
    transport ? { transport, sessionTimeoutMs: 30_000 } : { connectString, sessionTimeoutMs: 30_000, ...(tls ? { tls } : {}) },
  );
  await client.start();
  await client.create(path, payload).catch(async (e: unknown) => {
    if (!(e instanceof NodeExistsError)) throw e;
    await client.setData(path, payload);
  });
  const cd = `${path}-cd-tenure`;
  return {
    async getData(inFlight, stopped) {
      let done = 0;
      const loop = async (): Promise<void> => {
        while (!stopped()) {
          await client.getData(path);
          done++;
        }
      };
      await Promise.all(Array.from({ length: inFlight }, loop));
      return done;
    },
    async createDelete(stopped) {
      let n = 0;
      while (!stopped()) {
        await client.create(cd, payload);
        await client.delete(cd);
        n++;
      }
      return n;
    },
    close: () => client.close(),
  };
}

async function nzcPeer(connectString: string, path: string, payload: Buffer): Promise<Peer> {
  const zookeeper = (await import('node-zookeeper-client')).default;
  const client = zookeeper.createClient(connectString, { sessionTimeout: 30_000 });
  await new Promise<void>((resolve) => {
    client.once('connected', () => resolve());
    client.connect();
  });
  const call = <T>(fn: (cb: (err: Error | null, v?: T) => void) => void): Promise<T | undefined> =>
    new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));
  try {
    await call((cb) => client.create(path, payload, zookeeper.CreateMode.PERSISTENT, cb));
  } catch (e) {
    if ((e as { getCode?(): number }).getCode?.() !== zookeeper.Exception.NODE_EXISTS) throw e;
    await call((cb) => client.setData(path, payload, -1, cb));
  }
  const cd = `${path}-cd-nzc`;
  return {
    getData(inFlight, stopped) {
      return new Promise((resolve, reject) => {
        let done = 0;
        let outstanding = inFlight;
        const cb = (err: Error | null): void => {
          if (err) return reject(err);
          done++;
          if (stopped()) {
            if (--outstanding === 0) resolve(done);
          } else client.getData(path, cb);
        };
        for (let i = 0; i < inFlight; i++) client.getData(path, cb);
      });
    },
    createDelete(stopped) {
      return new Promise((resolve, reject) => {
        let n = 0;
        const next = (): void => {
          if (stopped()) return resolve(n);
          client.create(cd, payload, zookeeper.CreateMode.PERSISTENT, (err: Error | null) => {
            if (err) return reject(err);
            client.remove(cd, -1, (err2: Error | null) => {
              if (err2) return reject(err2);
              n++;
              next();
            });
          });
        };
        next();
      });
    },
    async close() {
      client.close();
    },
  };
}

async function runWorker(kind: string, connectString: string, path: string, payloadBytes: number, inFlight: number): Promise<void> {
  const payload = Buffer.alloc(payloadBytes, 'x');
  const peer = kind.startsWith('tenure')
    ? await tenurePeer(connectString, path, payload, arg('tls-dir', ''), kind === 'tenure-ws')
    : await nzcPeer(connectString, path, payload);
  const timed = async (ms: number, run: (stopped: () => boolean) => Promise<number>): Promise<string> => {
    let stop = false;
    const timer = setTimeout(() => (stop = true), ms);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const ops = await run(() => stop);
    const elapsed = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    clearTimeout(timer);
    return `${ops} ${elapsed} ${cpu.user + cpu.system}`;
  };
  console.log('ready');
  const lines = createInterface({ input: process.stdin });
  // Commands arrive one at a time (the orchestrator waits for each answer).
  for await (const line of lines) {
    const [cmd, a, b] = line.trim().split(' ');
    if (cmd === 'getdata') console.log(`result ${await timed(Number(a), (s) => peer.getData(inFlight, s))}`);
    else if (cmd === 'createdelete') console.log(`result ${await timed(Number(a), (s) => peer.createDelete(s))}`);
    else if (cmd === 'warmup') {
      await timed(Number(a), (s) => peer.getData(inFlight, s));
      await timed(Number(b), (s) => peer.createDelete(s));
      console.log('warmed');
    } else console.log(`error unknown command ${cmd}`);
  }
  await peer.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The orchestrator

/** A child process answering one stdout line per stdin command. */
class LineProcess {
  private readonly waiting: Array<(line: string) => void> = [];
  private readonly early: string[] = [];
  private exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const w = this.waiting.shift();
      if (w) w(line);
      else this.early.push(line);
    });
    child.once('exit', (code) => {
      this.exitCode = code;
      for (const w of this.waiting.splice(0)) w(`error ${name} exited (${code})`);
    });
  }

  next(timeoutMs = 120_000): Promise<string> {
    const line = this.early.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.exitCode !== undefined) return Promise.resolve(`error ${this.name} exited (${this.exitCode})`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no answer within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
  }

  async ask(command: string | undefined, timeoutMs?: number): Promise<string> {
    if (command !== undefined) this.child.stdin!.write(`${command}\n`);
    const line = await this.next(timeoutMs);
    if (line.startsWith('error')) throw new Error(`${this.name}: ${line}`);
    return line;
  }

  async stop(): Promise<void> {
    if (this.exitCode !== undefined) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

function nodeChild(name: string, args: string[]): LineProcess {
  const dir = arg('cpu-prof', '');
  // One folder per process: its main thread and tsx's loader thread each write a profile.
  const prof = dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}/${name.replace(/[^\w]+/g, '-')}`] : [];
  const child = spawn(process.execPath, [...process.execArgv, ...prof, SELF, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new LineProcess(name, child);
}

type ClientName = 'Tenure' | 'node-zookeeper-client' | 'Java ZooKeeper 3.8';
type ServerName =
  'ZooKeeper 3.8' | 'embedded (TCP)' | 'embedded (WS)' | 'ZooKeeper 3.8 Netty (TCP)' | 'ZooKeeper 3.8 (TLS)' | 'embedded (TLS)';

/** One column of the tables: a server reached over one transport. */
interface Column {
  name: ServerName;
  connect: string;
  transport: 'tcp' | 'tls' | 'ws';
  /** The embedded server's process, whose CPU is sampled per round. */
  embedded: boolean;
}

/** Which clients can use a transport (node-zookeeper-client has no TLS; no peer speaks WebSocket). */
const CLIENTS_FOR: Record<Column['transport'], readonly ClientName[]> = {
  tcp: ['Tenure', 'node-zookeeper-client', 'Java ZooKeeper 3.8'],
  tls: ['Tenure', 'Java ZooKeeper 3.8'],
  ws: ['Tenure'],
};

interface Worker {
  client: ClientName;
  server: ServerName;
  proc: LineProcess | import('../test/interop/java.js').JavaProgram;
}

interface Sample {
  opsPerSec: number;
  cpuUsPerOp: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmtOps = (n: number): string => Math.round(n).toLocaleString('en-US');
const fmtRatio = (n: number): string => `${n.toFixed(2)}×`;
const pad = (s: string, n: number): string => s.padEnd(n);
const padL = (s: string, n: number): string => s.padStart(n);

async function orchestrate(): Promise<void> {
  const SECONDS = Number(arg('seconds', '2'));
  const ROUNDS = Number(arg('rounds', '5'));
  const IN_FLIGHT = Number(arg('in-flight', '200'));
  const PAYLOAD = Number(arg('payload', '100'));
  const WARMUP = Number(arg('warmup', '2'));
  const EMBEDDED_ONLY = process.argv.includes('--embedded-only');
  const onlyClients = arg('clients', '');
  const wanted = (c: ClientName): boolean =>
    onlyClients === '' ||
    onlyClients.split(',').some((w) => c.toLowerCase().startsWith(w.toLowerCase()) || (w === 'nzc' && c === 'node-zookeeper-client'));
  const WITH_JAVA = !EMBEDDED_ONLY && !process.argv.includes('--no-java');
  const WITH_TLS = !process.argv.includes('--no-tls');
  const PATH = '/bench-getdata';
  const roundMs = SECONDS * 1000;
  const cdMs = Math.max(500, roundMs / 2);

  const { TestingServer, TlsTestingServer, makeTlsCertificates, javaClientFlags, NETTY_JARS } = await import('@tenure/testing');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const tlsDir = WITH_TLS ? mkdtempSync(path.join(tmpdir(), 'tenure-bench-tls-')) : '';
  const certs = WITH_TLS ? await makeTlsCertificates(tlsDir) : undefined;
  const { compileJava, javaToolchain, JavaProgram, ZOOKEEPER_JARS } = await import('../test/interop/java.js');
  const java = WITH_JAVA ? javaToolchain(ZOOKEEPER_JARS) : undefined;
  if (java && !java.available) console.error(`(no Java peer: ${java.reason})`);
  const useJava = java?.available === true;

  const loadBefore = loadavg()[0]!;
  console.error('starting ZooKeeper 3.8, the embedded server and the workers...');
  const source = fileURLToPath(new URL('./java/ZkGetDataBench.java', import.meta.url));
  // A benchmark server gets the full JIT (TestingServer defaults to a quick-start C1 JVM).
  const zkSettings = { tickTime: 2000, jvmFlags: ['-XX:TieredStopAtLevel=4', '-Xmx1g'] };
  const [zk, zkTls, compiled] = await Promise.all([
    EMBEDDED_ONLY ? Promise.resolve(undefined) : TestingServer.start(zkSettings),
    certs && !EMBEDDED_ONLY ? TlsTestingServer.start({ ...zkSettings, certificates: certs }) : Promise.resolve(undefined),
    useJava ? compileJava([source], ZOOKEEPER_JARS) : Promise.resolve(undefined),
  ]);
  const embedded = nodeChild('embedded server', ['--role', 'server', ...(tlsDir ? ['--tls-dir', tlsDir] : [])]);
  const [, embeddedAddress, embeddedWsUrl, embeddedTls] = (await embedded.ask(undefined)).split(' ') as [string, string, string, string];
  const columns: Column[] = [
    ...(zk ? [{ name: 'ZooKeeper 3.8', connect: zk.connectString, transport: 'tcp', embedded: false } as const] : []),
    { name: 'embedded (TCP)', connect: embeddedAddress, transport: 'tcp', embedded: true },
    { name: 'embedded (WS)', connect: embeddedWsUrl, transport: 'ws', embedded: true },
  ];
  if (zkTls) {
    // The TLS server's plaintext port too: TLS / TCP on ZooKeeper compares one factory (Netty) with itself.
    columns.push({ name: 'ZooKeeper 3.8 Netty (TCP)', connect: zkTls.server.connectString, transport: 'tcp', embedded: false });
    columns.push({ name: 'ZooKeeper 3.8 (TLS)', connect: zkTls.secureConnectString, transport: 'tls', embedded: false });
  }
  if (tlsDir) columns.push({ name: 'embedded (TLS)', connect: embeddedTls, transport: 'tls', embedded: true });
  const onlyTransports = arg('transports', '');
  if (onlyTransports !== '') columns.splice(0, columns.length, ...columns.filter((c) => onlyTransports.split(',').includes(c.transport)));
  const servers = columns.map((c) => [c.name, c.connect] as const);

  const workers: Worker[] = [];
  const cleanup = async (): Promise<void> => {
    await Promise.all(workers.map((w) => w.proc.stop()));
    await embedded.stop();
    await zk?.close();
    await zkTls?.close();
    compiled?.dispose();
    if (tlsDir) rmSync(tlsDir, { recursive: true, force: true });
  };
  try {
    // Started one at a time: a JVM's start-up would otherwise steal CPU from the others' handshakes.
    for (const { name: server, connect, transport } of columns) {
      const tls = transport === 'tls';
      const common = [
        '--connect',
        connect,
        '--path',
        PATH,
        '--payload',
        String(PAYLOAD),
        '--in-flight',
        String(IN_FLIGHT),
        ...(tls ? ['--tls-dir', tlsDir] : []),
      ];
      for (const [client, kind] of [
        ['Tenure', transport === 'ws' ? 'tenure-ws' : 'tenure'],
        ['node-zookeeper-client', 'nzc'],
      ] as const) {
        if (!CLIENTS_FOR[transport].includes(client) || !wanted(client)) continue;
        const proc = nodeChild(`${client} → ${server}`, ['--role', 'worker', '--client', kind, ...common]);
        await proc.ask(undefined, 60_000);
        workers.push({ client, server, proc });
      }
      if (useJava && compiled && CLIENTS_FOR[transport].includes('Java ZooKeeper 3.8') && wanted('Java ZooKeeper 3.8')) {
        // Over TLS: ZooKeeper's Netty client socket with the PKCS12 stores.
        const proc = await JavaProgram.start(
          {
            classpath: tls ? [compiled.classpath, ...NETTY_JARS].join(':') : compiled.classpath,
            mainClass: 'ZkGetDataBench',
            args: [connect, PATH, String(PAYLOAD), String(IN_FLIGHT)],
            jvmFlags: ['-Xmx512m', ...(tls && certs ? javaClientFlags(certs) : [])],
          },
          /^ready$/,
          60_000,
        );
        workers.push({ client: 'Java ZooKeeper 3.8', server, proc });
      }
    }
    const onEmbedded = (w: Worker): boolean => columns.some((c) => c.name === w.server && c.embedded);
    const ask = (w: Worker, command: string): Promise<string> =>
      w.proc instanceof LineProcess ? w.proc.ask(command) : w.proc.ask(command, /^(result |warmed$)/, 120_000);

    console.error(`warm-up: ${WARMUP} s of pipelined getData and ${WARMUP / 2} s of create+delete per worker`);
    for (const w of workers) {
      const answer = await ask(w, `warmup ${WARMUP * 1000} ${(WARMUP * 1000) / 2}`);
      if (answer !== 'warmed') throw new Error(`${w.client} → ${w.server}: ${answer}`);
    }

    const samples = new Map<string, Sample[]>();
    const key = (workload: string, w: Worker): string => `${workload}|${w.client}|${w.server}`;
    const serverCpu: Record<string, number[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = workers.map((_, i) => workers[(i + round) % workers.length]!);
      for (const [workload, ms] of [
        ['getdata', roundMs],
        ['createdelete', cdMs],
      ] as const) {
        for (const w of order) {
          const embeddedCpu0 = onEmbedded(w) ? Number((await embedded.ask('cpu')).split(' ')[1]) : 0;
          const line = await ask(w, `${workload} ${ms}`);
          const [, ops, elapsed, cpu] = line.split(' ').map(Number) as [number, number, number, number];
          const list = samples.get(key(workload, w)) ?? [];
          list.push({ opsPerSec: ops / (elapsed / 1000), cpuUsPerOp: cpu / ops });
          samples.set(key(workload, w), list);
          if (onEmbedded(w)) {
            const used = Number((await embedded.ask('cpu')).split(' ')[1]) - embeddedCpu0;
            (serverCpu[key(workload, w)] ??= []).push(used / ops);
          }
        }
      }
      console.error(`round ${round + 1}/${ROUNDS} done`);
    }

    report({
      samples,
      serverCpu,
      workers,
      servers: servers.map((s) => s[0]),
      ROUNDS,
      SECONDS,
      IN_FLIGHT,
      PAYLOAD,
      WARMUP,
      cdMs,
      load: [loadBefore, loadavg()[0]!],
    });
  } finally {
    await cleanup();
  }
}

interface ReportInput {
  samples: Map<string, Sample[]>;
  serverCpu: Record<string, number[]>;
  workers: Worker[];
  servers: ServerName[];
  ROUNDS: number;
  SECONDS: number;
  IN_FLIGHT: number;
  PAYLOAD: number;
  WARMUP: number;
  cdMs: number;
  /** 1-minute load average before and after: the machine may be shared. */
  load: [number, number];
}

function report(r: ReportInput): void {
  const clients = [...new Set(r.workers.map((w) => w.client))];
  const med = (workload: string, client: string, server: string, field: keyof Sample): number | undefined => {
    const s = r.samples.get(`${workload}|${client}|${server}`);
    return s === undefined ? undefined : median(s.map((x) => x[field]));
  };
  const cpuModel = cpus()[0]?.model ?? 'unknown CPU';
  const out: string[] = [];
  out.push('');
  out.push(
    `bench/clients.ts: node ${process.version}, ${cpus().length} × ${cpuModel}, load average ${r.load[0].toFixed(1)} before, ${r.load[1].toFixed(1)} after`,
  );
  out.push(
    `median of ${r.ROUNDS} interleaved rounds; getData rounds ${r.SECONDS} s, ${r.IN_FLIGHT} in flight, ${r.PAYLOAD}-byte payload; create+delete rounds ${r.cdMs / 1000} s; warm-up ${r.WARMUP} s + ${r.WARMUP / 2} s per worker`,
  );
  out.push('ZooKeeper 3.8.0 (Debian) standalone, tickTime 2000, forceSync=no, full JIT; embedded server in its own Node process');
  if (r.servers.some((s) => s.endsWith('(TLS)'))) {
    out.push(
      'TLS: a second ZooKeeper with the Netty factory (TLS needs it): its plaintext port is "Netty (TCP)", its secureClientPort (TLS 1.2) "(TLS)"; embedded (TLS) is TLS 1.3; client certificates required; nzc has no TLS',
    );
  }

  const table = (title: string, workload: string, field: keyof Sample, fmt: (n: number) => string, rows: string[] = clients): void => {
    out.push('');
    out.push(title);
    out.push(`| ${pad('client', 24)} | ${r.servers.map((s) => padL(s, 25)).join(' | ')} |`);
    out.push(`|${'-'.repeat(26)}|${r.servers.map(() => '-'.repeat(27)).join('|')}|`);
    for (const c of rows) {
      out.push(
        `| ${pad(c, 24)} | ${r.servers.map((s) => padL(((v) => (v === undefined ? '—' : fmt(v)))(med(workload, c, s, field)), 25)).join(' | ')} |`,
      );
    }
  };
  const ratioRow = (label: string, workload: string, field: keyof Sample, a: string, b: string): string =>
    `| ${pad(label, 24)} | ${r.servers
      .map((s) => {
        const x = med(workload, a, s, field);
        const y = med(workload, b, s, field);
        return padL(x === undefined || y === undefined ? '—' : fmtRatio(x / y), 25);
      })
      .join(' | ')} |`;

  table(`Pipelined getData, ops/s (${r.IN_FLIGHT} in flight)`, 'getdata', 'opsPerSec', fmtOps);
  if (clients.includes('Java ZooKeeper 3.8')) out.push(ratioRow('Tenure / Java', 'getdata', 'opsPerSec', 'Tenure', 'Java ZooKeeper 3.8'));
  out.push(ratioRow('Tenure / nzc', 'getdata', 'opsPerSec', 'Tenure', 'node-zookeeper-client'));

  table('Client CPU per getData, µs/op (whole client process)', 'getdata', 'cpuUsPerOp', (n) => n.toFixed(2));
  out.push(ratioRow('Tenure / nzc', 'getdata', 'cpuUsPerOp', 'Tenure', 'node-zookeeper-client'));

  table('Sequential create+delete, pairs/s (2 round trips each)', 'createdelete', 'opsPerSec', fmtOps);
  if (clients.includes('Java ZooKeeper 3.8'))
    out.push(ratioRow('Tenure / Java', 'createdelete', 'opsPerSec', 'Tenure', 'Java ZooKeeper 3.8'));
  out.push(ratioRow('Tenure / nzc', 'createdelete', 'opsPerSec', 'Tenure', 'node-zookeeper-client'));

  // The server-side comparison: one client, two servers.
  out.push('');
  out.push('Server side: the same client against both servers, embedded (TCP) / ZooKeeper 3.8');
  out.push(`| ${pad('client', 24)} | ${padL('getData', 16)} | ${padL('create+delete', 16)} |`);
  out.push(`|${'-'.repeat(26)}|${'-'.repeat(18)}|${'-'.repeat(18)}|`);
  for (const c of clients) {
    const ratio = (w: string): string => {
      const e = med(w, c, 'embedded (TCP)', 'opsPerSec');
      const z = med(w, c, 'ZooKeeper 3.8', 'opsPerSec');
      return e === undefined || z === undefined ? '—' : fmtRatio(e / z);
    };
    out.push(`| ${pad(c, 24)} | ${padL(ratio('getdata'), 16)} | ${padL(ratio('createdelete'), 16)} |`);
  }
  const scpu = r.serverCpu['getdata|Tenure|embedded (TCP)'];
  if (scpu) out.push(`embedded server CPU per getData (Tenure rounds): ${median(scpu).toFixed(2)} µs/op`);
  const scpuTls = r.serverCpu['getdata|Tenure|embedded (TLS)'];
  if (scpuTls) out.push(`embedded server CPU per getData over TLS (Tenure rounds): ${median(scpuTls).toFixed(2)} µs/op`);
  const scpuWs = r.serverCpu['getdata|Tenure|embedded (WS)'];
  if (scpuWs) out.push(`embedded server CPU per getData over WebSocket (Tenure rounds): ${median(scpuWs).toFixed(2)} µs/op`);

  // What TLS costs each client, on each server: TLS / TCP.
  const pairs: [string, ServerName, ServerName][] = [
    ['ZooKeeper 3.8', 'ZooKeeper 3.8 (TLS)', 'ZooKeeper 3.8 Netty (TCP)'],
    ['embedded', 'embedded (TLS)', 'embedded (TCP)'],
  ];
  if (r.servers.includes('embedded (TLS)') || r.servers.includes('ZooKeeper 3.8 (TLS)')) {
    out.push('');
    out.push('TLS / TCP, same client and server kind (getData ops/s; client CPU/op)');
    out.push(`| ${pad('client', 24)} | ${pairs.map(([n]) => padL(`${n} ops/s`, 24) + ' | ' + padL(`${n} CPU/op`, 24)).join(' | ')} |`);
    out.push(`|${'-'.repeat(26)}|${pairs.map(() => '-'.repeat(26) + '|' + '-'.repeat(26)).join('|')}|`);
    for (const c of clients) {
      const cell = (a: ServerName, b: ServerName, f: keyof Sample): string => {
        const x = med('getdata', c, a, f);
        const y = med('getdata', c, b, f);
        return padL(x === undefined || y === undefined ? '—' : fmtRatio(x / y), 24);
      };
      out.push(`| ${pad(c, 24)} | ${pairs.map(([, t, p]) => cell(t, p, 'opsPerSec') + ' | ' + cell(t, p, 'cpuUsPerOp')).join(' | ')} |`);
    }
  }

  // WebSocket against TCP: the same client and server, only the transport differs.
  const wsOps = med('getdata', 'Tenure', 'embedded (WS)', 'opsPerSec');
  const tcpOps = med('getdata', 'Tenure', 'embedded (TCP)', 'opsPerSec');
  const wsCpu = med('getdata', 'Tenure', 'embedded (WS)', 'cpuUsPerOp');
  const tcpCpu = med('getdata', 'Tenure', 'embedded (TCP)', 'cpuUsPerOp');
  const wsServerCpu = r.serverCpu[`getdata|Tenure|embedded (WS)`];
  if (wsOps !== undefined && tcpOps !== undefined && wsCpu !== undefined && tcpCpu !== undefined) {
    out.push(
      `Tenure getData over WebSocket / TCP (embedded): ${fmtRatio(wsOps / tcpOps)} ops/s, ${fmtRatio(wsCpu / tcpCpu)} client CPU/op` +
        (wsServerCpu && scpu
          ? `, ${fmtRatio(median(wsServerCpu) / median(scpu))} server CPU/op (${median(wsServerCpu).toFixed(2)} µs/op)`
          : ''),
    );
  }

  // Every round, so that the spread behind each median is visible (the machine may be shared).
  out.push('');
  out.push('Per round, in run order (ops/s; create+delete in pairs/s)');
  for (const [workload, label] of [
    ['getdata', 'getData'],
    ['createdelete', 'create+delete'],
  ] as const) {
    for (const s of r.servers) {
      for (const c of clients) {
        const xs = r.samples.get(`${workload}|${c}|${s}`);
        if (xs) out.push(`  ${pad(label, 13)} ${pad(c, 22)} → ${pad(s, 25)} ${xs.map((x) => padL(fmtOps(x.opsPerSec), 8)).join(' ')}`);
      }
    }
  }

  // Targets: the ratios the client is held to.
  const g = (c: string, s: ServerName, f: keyof Sample = 'opsPerSec', w = 'getdata'): number | undefined => med(w, c, s, f);
  const check = (label: string, value: number | undefined, ok: (v: number) => boolean, target: string): void => {
    out.push(
      `${value === undefined ? '–' : ok(value) ? '✓' : '✗'} ${label}: ${value === undefined ? 'n/a' : fmtRatio(value)} (target ${target})`,
    );
  };
  const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
    a === undefined || b === undefined ? undefined : a / b;
  out.push('');
  out.push('Targets');
  for (const s of r.servers) {
    if (s === 'ZooKeeper 3.8 Netty (TCP)' || s === 'embedded (WS)') continue; // references for the TLS / TCP and WS / TCP lines only
    if (s.endsWith('(TLS)')) {
      check(`[${s}] Tenure / Java getData throughput`, ratio(g('Tenure', s), g('Java ZooKeeper 3.8', s)), (v) => v >= 1.0, '≥ 1.0×');
      continue;
    }
    check(`[${s}] Tenure / Java getData throughput`, ratio(g('Tenure', s), g('Java ZooKeeper 3.8', s)), (v) => v >= 1.0, '≥ 1.0×');
    check(`[${s}] Tenure / nzc getData throughput`, ratio(g('Tenure', s), g('node-zookeeper-client', s)), (v) => v >= 1.2, '≥ 1.2×');
    check(
      `[${s}] Tenure / nzc CPU per op`,
      ratio(g('Tenure', s, 'cpuUsPerOp'), g('node-zookeeper-client', s, 'cpuUsPerOp')),
      (v) => v <= 0.7,
      '≤ 0.7×',
    );
  }
  check(
    'embedded (TCP) / ZooKeeper 3.8, Tenure getData',
    ratio(g('Tenure', 'embedded (TCP)'), g('Tenure', 'ZooKeeper 3.8')),
    (v) => v >= 1.0,
    '≥ 1.0×',
  );
  console.log(out.join('\n'));
}

// Re-run under bench/tsconfig.json so that every @tenure/* import, in every process, is the source.
if (process.env.TSX_TSCONFIG_PATH !== TSCONFIG) {
  const child = spawn(process.execPath, [...process.execArgv, SELF, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG },
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await main();
}
