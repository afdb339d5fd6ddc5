/** The storage summaries of the metrics: a data dir's snapshots and log fsyncs are observed. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { ServerMetrics } from '../src/metrics.js';
import { create, open, type RawSession } from '../../server/test/harness.js';

const dirs: string[] = [];
const servers: EmbeddedServer[] = [];
const sessions: RawSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.conn.close();
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test('the snapshot and the log fsyncs are observed by the snapshottime and fsynctime summaries', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-snap-'));
  dirs.push(dir);
  const server = createEmbeddedServer({ dataDir: dir, preAllocSize: 64, snapCount: 1e9, forceSync: true });
  servers.push(server);
  const metrics = new ServerMetrics(server);
  const s = await open(server.transport());
  sessions.push(s);
  expect((await s.conn.send(create('/m', Buffer.from('x')))).err).toBe(0);
  await server.snapshot();
  const count = async (name: string): Promise<number> => {
    const m = (await metrics.registry.getSingleMetric(name)!.get()).values.find((v) => v.metricName === `${name}_count`);
    return m?.value ?? 0;
  };
  expect(await count('snapshottime')).toBe(1);
  expect(await count('fsynctime')).toBeGreaterThanOrEqual(1);
});
