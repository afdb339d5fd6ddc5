/**
 * The conformance suite: ZooKeeper's observable behaviour, driven through the transport contract
 * only (Transport.connect and Connection.send with raw request records).
 *
 * It runs unchanged against every target: the embedded server in-process, real Apache ZooKeeper
 * 3.8 over TCP, the embedded server over TCP. No file here knows which one it talks to, and every
 * assertion is something real ZooKeeper 3.8 also shows. A target states only its timing knobs.
 *
 * Usage, in a `*.test.ts` (or `*.zk.test.ts`) file:
 *
 *   conformanceSuite('embedded, in-process', async () => ({ transport, tickMs: 200, containerCheckIntervalMs: 100, close }));
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { ConnectParams, Transport } from '@tenure/protocol';
import { RawSession } from './raw-session.js';
import { aclTests } from './acl-cases.js';
import { lifecycleTests } from './node-lifecycle-cases.js';
import { limitTests } from './limit-cases.js';
import { multiTests } from './multi-cases.js';
import { operationTests } from './operation-cases.js';
import { sessionTests } from './session-cases.js';
import { watchTests } from './watch-cases.js';

/** A server to run the suite against. */
export interface ConformanceTarget {
  transport: Transport;
  /** The host to connect to; default `transport.hosts[0]`. */
  host?: string;
  /** The server's tick (ZooKeeper's tickTime), ms. Session timeouts are clamped to [2, 20] ticks. */
  tickMs: number;
  /** How often the server reaps empty containers and expired TTL nodes, ms. */
  containerCheckIntervalMs: number;
  close(): Promise<void>;
}

/** What the cases get: the target, and sessions that are closed after each test. */
export interface SuiteContext {
  readonly target: ConformanceTarget;
  readonly host: string;
  readonly tickMs: number;
  /** Opens a session (closed after the test). */
  open(params?: Partial<ConnectParams>): Promise<RawSession>;
  /** Opens or re-attaches; 'expired' for the zero-timeout answer. */
  tryOpen(params?: Partial<ConnectParams>): Promise<RawSession | 'expired'>;
  /** A fresh, empty persistent node owned by this test. */
  root(): Promise<string>;
}

/**
 * `retry` reruns a failed case (with fresh paths): only for a target whose documented model allows
 * a case to race, e.g. two front ends whose views trail each other as a ZooKeeper follower trails
 * its leader (a session's read on one may not yet show another session's write on the other).
 */
export function conformanceSuite(targetName: string, makeTarget: () => Promise<ConformanceTarget>, options: { retry?: number } = {}): void {
  describe(`conformance: ${targetName}`, { retry: options.retry ?? 0 }, () => {
    let target: ConformanceTarget | undefined;
    let base = '';
    let counter = 0;
    const opened: RawSession[] = [];

    const ctx: SuiteContext = {
      get target() {
        if (target === undefined) throw new Error('the conformance target is not ready');
        return target;
      },
      get host() {
        return ctx.target.host ?? ctx.target.transport.hosts[0]!;
      },
      get tickMs() {
        return ctx.target.tickMs;
      },
      async tryOpen(params = {}) {
        const s = await RawSession.open(ctx.target.transport, ctx.host, params);
        if (s !== 'expired') opened.push(s);
        return s;
      },
      async open(params = {}) {
        const s = await ctx.tryOpen(params);
        if (s === 'expired') throw new Error('the server answered a zero timeout (session expired)');
        return s;
      },
      async root() {
        const s = await ctx.open();
        return s.mkdir(`${base}/t${++counter}`);
      },
    };

    beforeAll(async () => {
      target = await makeTarget();
      const s = await ctx.open();
      base = await s.mkdir(`/conformance-${Math.random().toString(36).slice(2, 10)}`);
      await s.closeSession();
    });

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.closeSession()));
    });

    afterAll(async () => {
      await Promise.all(opened.splice(0).map((s) => s.closeSession()));
      await target?.close();
    });

    sessionTests(ctx);
    operationTests(ctx);
    watchTests(ctx);
    multiTests(ctx);
    aclTests(ctx);
    lifecycleTests(ctx);
    limitTests(ctx);
  });
}
