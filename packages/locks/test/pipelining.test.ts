/**
 * The queue's first listing travels right behind its create, in a namespace as without one: over a
 * transport with latency both requests are in flight together and an uncontended acquire costs one
 * round trip for the two.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OpCode, type ConnectParams, type ConnectionHandlers } from '@tenure/protocol';
import { createClient, type Client, type Transport } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { Mutex } from '../src/index.js';
import { startServer } from './harness.js';

interface Sent {
  op: number;
  path: string;
  /** Requests unanswered when this one was sent (itself included). */
  inFlight: number;
}

/** Replies held back by `ms` (in order), and every request recorded with what was in flight. */
function slowTransport(inner: Transport, ms: number, sent: Sent[]): Transport {
  return {
    get hosts() {
      return inner.hosts;
    },
    async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      const result = await inner.connect(host, params, handlers);
      if (result.kind !== 'connected') return result;
      const conn = result.connection;
      const send = conn.send.bind(conn);
      let inFlight = 0;
      conn.send = ((req: { type: number; path?: string }, onReply?: never) => {
        sent.push({ op: req.type, path: req.path ?? '', inFlight: ++inFlight });
        return send(req as never, onReply).then(
          (reply) =>
            new Promise((resolve) =>
              setTimeout(() => {
                inFlight--;
                resolve(reply);
              }, ms),
            ),
        );
      }) as typeof conn.send;
      return result;
    },
  };
}

describe('create and first listing, pipelined', () => {
  let server: EmbeddedServer;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  for (const namespace of [null, 'app']) {
    it(`in ${namespace === null ? 'no namespace' : 'a namespace'}: the create and the listing are in flight together`, async () => {
      server = startServer({ containerCheckIntervalMs: 60_000 });
      const sent: Sent[] = [];
      client = createClient({ transport: slowTransport(server.transport(), 20, sent) });
      await client.start();
      const view = namespace === null ? client : client.usingNamespace(namespace);
      const prefix = namespace === null ? '' : `/${namespace}`;
      // The lock's parent exists (a first acquire creates it), as in the steady state.
      await (await new Mutex(view, '/locks/pipe').acquire()).release();
      sent.length = 0;
      const lease = await new Mutex(view, '/locks/pipe').acquire();
      const create = sent.findIndex((s) => s.op === OpCode.create2);
      const list = sent.findIndex((s) => s.op === OpCode.getChildren || s.op === OpCode.getChildren2);
      expect(sent[create]!.path.startsWith(`${prefix}/locks/pipe/_c_`)).toBe(true);
      expect(sent[list]).toMatchObject({ path: `${prefix}/locks/pipe`, inFlight: 2 });
      expect(list).toBe(create + 1);
      // Nothing else before the grant: one round trip for both, not two.
      expect(sent).toHaveLength(2);
      await lease.release();
    });
  }
});
