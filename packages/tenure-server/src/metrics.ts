/**
 * Prometheus metrics for tenure-server, under the names ZooKeeper 3.8's PrometheusMetricsProvider
 * exports (ZooKeeperServer.registerMetrics' gauges, ServerMetrics' summaries and counters), so
 * that dashboards and alerts made for ZooKeeper read them unchanged. As in ZooKeeper each metric's
 * help text is its name, summaries are in milliseconds, "basic" summaries have the 0.5 quantile and
 * "advanced" ones 0.5, 0.9 and 0.99. Node's own process metrics (prom-client's defaults) stand in
 * for the JVM's.
 *
 * Gauges are read from the server when scraped; latencies come from the front door's request
 * timing (the server's connectionLimits).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry, Summary, collectDefaultMetrics } from 'prom-client';
import { requestKind, type EmbeddedServer } from '@tenure/server';

const BASIC = [0.5];
const ADVANCED = [0.5, 0.9, 0.99];

/** Open file descriptors of this process (ZooKeeper's OSMXBean reads the same on Linux). */
function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return 0;
  }
}

function maxFds(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The metrics of one server, in their own registry. */
export class ServerMetrics {
  readonly registry = new Registry();
  /** Write latency, ms (ZooKeeper's updatelatency). */
  readonly updateLatency: Summary;
  /** Read latency, ms (readlatency). */
  readonly readLatency: Summary;
  /** Time of each log fsync, ms (fsynctime): observed by durable storage. */
  readonly fsyncTime: Summary;
  /** Time to write a snapshot, ms (snapshottime): observed by durable storage. */
  readonly snapshotTime: Summary;
  private readonly startedAt = Date.now();

  constructor(server: EmbeddedServer) {
    const registers = [this.registry];
    const view = server.introspection;
    const limits = server.connectionLimits;
    const gauge = (name: string, read: () => number): void => {
      new Gauge({
        name,
        help: name,
        registers,
        collect() {
          this.set(read());
        },
      });
    };
    gauge('znode_count', () => view.nodeCount);
    gauge('watch_count', () => {
      let n = 0;
      for (const c of view.watchCounts().values()) n += c;
      return n;
    });
    gauge('ephemerals_count', () => view.ephemeralCount);
    gauge('approximate_data_size', () => view.approximateDataSize);
    gauge('num_alive_connections', () => view.connectionCount);
    gauge('outstanding_requests', () => limits.outstanding);
    gauge('packets_received', () => limits.packetsReceived);
    gauge('packets_sent', () => limits.packetsSent);
    gauge('avg_latency', () => (limits.latency.count === 0 ? 0 : limits.latency.sumMs / limits.latency.count));
    gauge('min_latency', () => (limits.latency.count === 0 ? 0 : limits.latency.minMs));
    gauge('max_latency', () => limits.latency.maxMs);
    gauge('global_sessions', () => view.sessionCount);
    gauge('local_sessions', () => 0);
    gauge('uptime', () => Date.now() - this.startedAt);
    gauge('open_file_descriptor_count', openFds);
    gauge('max_file_descriptor_count', maxFds);
    gauge('connection_drop_probability', () => 0);
    let rejectedSeen = 0;
    new Counter({
      name: 'connection_rejected',
      help: 'connection_rejected',
      registers,
      collect() {
        // A counter only rises: add what was refused since the last scrape.
        if (limits.rejected > rejectedSeen) this.inc(limits.rejected - rejectedSeen);
        rejectedSeen = limits.rejected;
      },
    });
    const summary = (name: string, percentiles: number[]): Summary => new Summary({ name, help: name, percentiles, registers });
    this.readLatency = summary('readlatency', ADVANCED);
    this.updateLatency = summary('updatelatency', ADVANCED);
    this.fsyncTime = summary('fsynctime', BASIC);
    this.snapshotTime = summary('snapshottime', BASIC);
    // Both from the storage (a data dir); the log's fsync only with forceSync.
    server.onStorage((e) => {
      if (e.kind === 'snapshot') this.snapshotTime.observe(e.totalMs);
      else if (e.kind === 'durable' && e.syncMs > 0) this.fsyncTime.observe(e.syncMs);
    });
    collectDefaultMetrics({ register: this.registry });
    limits.time((ms, op) => {
      const kind = requestKind(op);
      if (kind === 'write') this.updateLatency.observe(ms);
      else if (kind === 'read') this.readLatency.observe(ms);
    });
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** An HTTP server answering GET /metrics with `metrics`' text, as ZooKeeper's provider does. */
export async function serveMetrics(metrics: ServerMetrics, port: number, host: string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || (path !== '/metrics' && path !== '/')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}
