/**
 * @tenure/otel's README service: its program runs (from source, through tsx) against the embedded
 * server over TCP, with OTEL_EXPORTER_OTLP_ENDPOINT at an OTLP/HTTP receiver of this test's, which
 * keeps in memory what the real exporters send (OTLP JSON); the spans and metrics the README
 * promises arrive, and the program exits 0 having flushed them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { expect, test } from 'vitest';
import { createEmbeddedServer } from '@tenure/server';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface OtlpSpan {
  name: string;
  spanId: string;
  parentSpanId?: string;
  status?: { code?: number };
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** An OTLP/HTTP receiver: every JSON body posted to /v1/traces and /v1/metrics, kept in memory. */
async function otlpReceiver(): Promise<{ endpoint: string; traces: unknown[]; metrics: unknown[]; close(): Promise<void> }> {
  const traces: unknown[] = [];
  const metrics: unknown[] = [];
  const body = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    return JSON.parse((req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'));
  };
  const server = createServer((req, res) => {
    body(req)
      .then((json) => {
        if (req.url === '/v1/traces') traces.push(json);
        else if (req.url === '/v1/metrics') metrics.push(json);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      })
      .catch(() => res.writeHead(400).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, traces, metrics, close: () => new Promise((r) => server.close(() => r())) };
}

test("the README's service sends its request span, the lock wait and the ZooKeeper calls under it, and the metrics", async () => {
  const readme = readFileSync(`${root}packages/otel/README.md`, 'utf8');
  const snippet = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((s) => s.includes('OTLPTraceExporter'));
  expect(snippet).toBeDefined();
  const zk = createEmbeddedServer();
  const { connectString } = await zk.listen({ port: 0, host: '127.0.0.1' });
  const receiver = await otlpReceiver();
  // Inside the repository, so that the program's @opentelemetry/* imports resolve from its node_modules.
  const dir = mkdtempSync(join(root, 'packages/otel/test/.readme-'));
  try {
    writeFileSync(join(dir, 'service.mts'), snippet!);
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', join(dir, 'service.mts')],
        {
          cwd: root,
          timeout: 60_000,
          env: {
            ...process.env,
            TSX_TSCONFIG_PATH: `${root}bench/tsconfig.json`,
            TENURE_SERVER: connectString,
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          },
        },
        (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }),
      );
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);

    const spans = (receiver.traces as Array<{ resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }>).flatMap((t) =>
      t.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
    );
    const request = spans.find((s) => s.name === 'POST /orders')!;
    expect(request).toBeDefined();
    const children = spans.filter((s) => s.parentSpanId === request.spanId).map((s) => s.name);
    expect(children).toEqual(expect.arrayContaining(['tenure lock acquire', 'zookeeper exists', 'zookeeper create', 'zookeeper delete']));
    const exists = spans.find((s) => s.name === 'zookeeper exists')!;
    const attr = (s: OtlpSpan, key: string): unknown => Object.values(s.attributes?.find((a) => a.key === key)?.value ?? {})[0];
    expect(attr(exists, 'zookeeper.path')).toBe('/orders/last');
    expect(attr(exists, 'server.address')).toBe('127.0.0.1');

    const metricNames = new Set(
      (receiver.metrics as Array<{ resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string }> }> }> }>).flatMap((m) =>
        m.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.map((x) => x.name))),
      ),
    );
    for (const name of [
      'zookeeper.client.operation.duration',
      'tenure.lock.wait.duration',
      'tenure.lock.hold.duration',
      'zookeeper.client.session.state',
    ])
      expect(metricNames, name).toContain(name);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await receiver.close();
    await zk.close();
  }
}, 70_000);
