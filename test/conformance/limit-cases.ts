/** jute.maxbuffer: a request whose payload is larger than 1,048,575 bytes closes its connection. */
import { describe, expect, test } from 'vitest';
import type { CreateRequest } from '@tenure/protocol';
import { DEFAULT_MAX_BUFFER, OPEN_ACL_UNSAFE, OpCode, encodedRequestSize } from '@tenure/protocol';
import { E } from './raw-session.js';
import type { SuiteContext } from './suite.js';

/** A create whose encoded payload (header + record) is exactly `bytes` long. */
function createOfSize(path: string, bytes: number): CreateRequest {
  const probe: CreateRequest = { type: OpCode.create, path, data: Buffer.alloc(0), acl: [...OPEN_ACL_UNSAFE], flags: 0 };
  const overhead = encodedRequestSize(1, probe);
  return { ...probe, data: Buffer.alloc(bytes - overhead, 0x61) };
}

export function limitTests(ctx: SuiteContext): void {
  describe('limits', () => {
    test('a request of exactly jute.maxbuffer bytes is served', async () => {
      const root = await ctx.root();
      const s = await ctx.open();
      const req = createOfSize(`${root}/big`, DEFAULT_MAX_BUFFER);
      expect(encodedRequestSize(1, req)).toBe(DEFAULT_MAX_BUFFER);
      const r = await s.send(req);
      expect(r.err).toBe(0);
      expect((await s.stat(`${root}/big`)).dataLength).toBe(req.data!.length);
    });

    test('one byte more closes the connection unanswered; the session and the server carry on', async () => {
      const root = await ctx.root();
      const other = await ctx.open();
      const s = await ctx.open({ timeoutMs: 10 * ctx.tickMs });
      await s.mkdir(`${root}/n`);
      const req = createOfSize(`${root}/toobig`, DEFAULT_MAX_BUFFER + 1);
      await expect(s.send(req)).rejects.toMatchObject({ keeperCode: E.CONNECTIONLOSS });
      await s.closed;
      expect((await other.exists(`${root}/toobig`)).err).toBe(E.NONODE);
      expect((await other.ping()).err).toBe(0);
      const again = await ctx.open({ sessionId: s.id, passwd: s.conn.passwd, timeoutMs: 10 * ctx.tickMs });
      expect((await again.exists(`${root}/n`)).err).toBe(0);
    });
  });
}
