/**
 * One TestingEtcd per describe block, and everything a test opens on it closed after: clients,
 * etcdTransports and tenure-server front ends, then etcd itself. For the small etcd suites that
 * each used to carry this set-up.
 */
import { afterAll, beforeAll } from 'vitest';
import { createClient, type Client, type Transport } from '@tenure/client';
import type { EtcdTransport } from '@tenure/etcd';
import { TestingEtcd, type TenureServerProcess } from '@tenure/testing';

export interface EtcdBed {
  /** The describe block's etcd (set in its beforeAll). */
  readonly etcd: TestingEtcd;
  /** A started client on `transport`, closed after the block. */
  open(transport: Transport, sessionTimeoutMs: number): Promise<Client>;
  /** Closed after the block (after the clients). */
  transport<T extends EtcdTransport>(t: T): T;
  /** Stopped after the block (after the clients). */
  server(s: TenureServerProcess): TenureServerProcess;
}

/** Registers the block's beforeAll and afterAll; call it at the top of a describe. */
export function useEtcdBed(): EtcdBed {
  let etcd: TestingEtcd | undefined;
  const clients: Client[] = [];
  const transports: EtcdTransport[] = [];
  const servers: TenureServerProcess[] = [];
  beforeAll(async () => {
    etcd = await TestingEtcd.start();
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const t of transports) await t.close();
    await Promise.all(servers.map((s) => s.stop().catch(() => undefined)));
    await etcd?.close();
  });
  return {
    get etcd() {
      return etcd!;
    },
    async open(transport, sessionTimeoutMs) {
      const c = createClient({ transport, sessionTimeoutMs });
      clients.push(c);
      await c.start({ timeoutMs: 10_000 });
      return c;
    },
    transport(t) {
      transports.push(t);
      return t;
    },
    server(s) {
      servers.push(s);
      return s;
    },
  };
}
