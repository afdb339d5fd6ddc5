/**
 * Pipelined getData through @tenure/client versus raw calls on the embedded server's in-process
 * transport, on the same server code in the same run. The gap is the client's own cost per
 * operation: path validation, namespace, the session timers' bookkeeping, reply mapping. One case
 * subscribes to the `tenure:client:request` TracingChannel (all five hooks, trivial handlers): the
 * cost of tracing, against none without a subscriber. Two cases register @tenure/otel's
 * TenureInstrumentation: on the API alone (no SDK: no-op tracer and meter, as a library sees it
 * before the application sets one up), and on a recording SDK (every span sampled and ended, the
 * duration histogram aggregated, the async-hooks context manager on), against none.
 *
 *   npx tsx bench/client.ts [--seconds 2] [--window 1000] [--rounds 3]
 *
 * Every case runs in a fresh process, so that the JIT state one case leaves behind (type feedback,
 * deoptimizations, heap) cannot penalize the next. Imports the packages from source (no build needed).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OpCode, type Connection } from '@tenure/protocol';
import { createClient, requestChannel } from '../packages/client/src/index.js';
import { createEmbeddedServer } from '../packages/server/src/index.js';
import { TenureInstrumentation } from '../packages/otel/src/index.js';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SECONDS = Number(arg('seconds', '2'));
const WINDOW = Number(arg('window', '1000'));
const ROUNDS = Number(arg('rounds', '3'));

const CASES = [
  'raw transport getData',
  'client getData',
  'client getData (namespace)',
  'client getData (diagnostics subscriber)',
  'client getData (otel, API only)',
  'client getData (otel, recording SDK)',
  'client exists',
  'client setData',
] as const;
type Case = (typeof CASES)[number];

/** `window` loops each keeping one request in flight, for `ms`; returns ops/s. */
async function pipelined(op: () => Promise<unknown>, ms: number, window: number): Promise<number> {
  let done = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (performance.now() < end) {
        await op();
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/** Runs one case in this process: warm-up, then ROUNDS timed rounds; prints JSON ops/s. */
async function runCase(name: Case): Promise<void> {
  const server = createEmbeddedServer({ tickMs: 2000 });
  const data = Buffer.alloc(100, 1);
  let op: () => Promise<unknown>;
  let close: () => Promise<void>;
  if (name === 'raw transport getData') {
    const r = await server
      .transport()
      .connect(
        'embedded',
        { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 30_000, readOnly: false },
        { onEvent: () => {}, onClose: () => {} },
      );
    if (r.kind !== 'connected') throw new Error('raw connect failed');
    const conn: Connection = r.connection;
    await conn.send({ type: OpCode.create, path: '/bench', data, acl: [{ perms: 31, id: { scheme: 'world', id: 'anyone' } }], flags: 0 });
    op = () => conn.send({ type: OpCode.getData, path: '/bench', watch: false });
    close = async () => conn.close();
  } else {
    const client = createClient({ transport: server.transport(), sessionTimeoutMs: 30_000 });
    await client.start();
    const view = name.includes('namespace') ? client.usingNamespace('app') : client;
    await view.create('/bench', data);
    if (name === 'client getData (diagnostics subscriber)') {
      let events = 0;
      const count = (): void => void events++;
      requestChannel.subscribe({ start: count, end: count, asyncStart: count, asyncEnd: count, error: count });
    }
    if (name === 'client getData (otel, API only)') registerInstrumentations({ instrumentations: [new TenureInstrumentation()] });
    if (name === 'client getData (otel, recording SDK)') {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      // No span processor: spans are made, sampled and ended, and exported nowhere (exporting is the SDK's cost, not ours).
      const tracerProvider = new BasicTracerProvider();
      const reader = new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 3_600_000,
      });
      registerInstrumentations({
        instrumentations: [new TenureInstrumentation()],
        tracerProvider,
        meterProvider: new MeterProvider({ readers: [reader] }),
      });
    }
    if (name === 'client exists') op = () => view.exists('/bench');
    else if (name === 'client setData') op = () => view.setData('/bench', data);
    else op = () => view.getData('/bench');
    close = () => client.close();
  }
  await pipelined(op, 500, WINDOW); // warm-up
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await pipelined(op, SECONDS * 1000, WINDOW));
  await close();
  await server.close();
  process.stdout.write(JSON.stringify(rounds) + '\n');
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number): string => `${Math.round(n / 1000).toLocaleString('en')}k/s`;

async function main(): Promise<void> {
  const only = arg('case', '');
  if (only) return runCase(only as Case);
  const self = fileURLToPath(import.meta.url);
  const results = new Map<Case, number>();
  for (const name of CASES) {
    const out = spawnSync(
      process.execPath,
      [...process.execArgv, self, '--case', name, '--seconds', String(SECONDS), '--window', String(WINDOW), '--rounds', String(ROUNDS)],
      {
        encoding: 'utf8',
      },
    );
    if (out.status !== 0) throw new Error(`case ${name} failed: ${out.stderr}`);
    results.set(name, median(JSON.parse(out.stdout.trim().split('\n').pop()!) as number[]));
  }
  const raw = results.get('raw transport getData')!;
  console.log(
    `pipelined ops on the embedded server, in-process; window ${WINDOW}, median of ${ROUNDS} x ${SECONDS} s, each case in a fresh process; node ${process.version}`,
  );
  for (const [name, ops] of results) console.log(`  ${name.padEnd(40)} ${fmt(ops).padStart(10)}   ${(ops / raw).toFixed(2)}x raw getData`);
  const client = results.get('client getData')!;
  for (const name of ['client getData (otel, API only)', 'client getData (otel, recording SDK)'] as const)
    console.log(`${name}: ${(results.get(name)! / client).toFixed(2)}x client getData without instrumentation`);
  console.log(`compass target >= 500k/s getData through the client: ${client >= 500_000 ? 'met' : 'not met'} (${fmt(client)})`);
}

await main();
