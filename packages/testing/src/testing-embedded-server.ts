/**
 * TestingEmbeddedServer: the TestingServer interface over Tenure's own embedded server
 * (`@tenure/server`), with the same test settings (tick 200 ms, containers reaped every 100 ms,
 * TTL nodes on). It offers `transport()` for `createClient({ transport })`; `connectString` needs
 * the embedded server's TCP listener, which it does not have yet.
 */
import type { Transport } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@tenure/server';
import type { ServerDump } from './server-dump.js';

export interface TestingEmbeddedServerOptions extends EmbeddedServerOptions {}

/** Longest a stopped server refuses connections before serving again on its own (setTimeout's limit). */
const STOPPED_MS = 2_147_483_647;

export class TestingEmbeddedServer {
  private stopped = false;

  private constructor(readonly server: EmbeddedServer) {}

  static async start(options: TestingEmbeddedServerOptions = {}): Promise<TestingEmbeddedServer> {
    return new TestingEmbeddedServer(
      createEmbeddedServer({ tickMs: 200, containerCheckIntervalMs: 100, ttlEnabled: true, ...options }),
    );
  }

  /** A transport that reaches the server in-process. */
  transport(): Transport {
    return this.server.transport();
  }

  /** Not available until the embedded server has a TCP listener (issue 6); use `transport()`. */
  get connectString(): string {
    throw new Error('the embedded server has no TCP listener yet: use transport() instead of connectString');
  }

  get running(): boolean {
    return !this.stopped && !this.server.closed;
  }

  /**
   * Closes every connection and refuses new ones until restart(). Unlike a killed ZooKeeper, the
   * sessions' clocks keep running meanwhile.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    void this.server.restart(STOPPED_MS);
  }

  /** Serves again with the same data and sessions. */
  async restart(): Promise<void> {
    this.stopped = false;
    await this.server.restart(0);
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Sessions with their ephemerals and watches, in the shape of TestingServer.dump(). */
  async dump(): Promise<ServerDump> {
    const sessions = this.server
      .sessions()
      .map((s) => {
        const w = this.server.watchesOf(s.sessionId);
        const watchedPaths = [...new Set([...w.data, ...w.child])].sort();
        return { sessionId: s.sessionId, ephemerals: [...s.ephemerals].sort(), watchedPaths, watches: s.watches };
      })
      .sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
    return { sessions, totalWatches: sessions.reduce((n, s) => n + s.watches, 0), raw: { dump: this.server.dump(), wchc: '' } };
  }
}
