/**
 * TestingEmbeddedServer: the TestingServer interface over Tenure's own embedded server
 * (`@tenure/server`), with the same test settings (tick 200 ms, containers reaped every 100 ms,
 * TTL nodes on). It offers `transport()` for `createClient({ transport })` (in-process), and it
 * listens on a free loopback port, so `connectString` reaches it over TCP like any ZooKeeper.
 */
import type { Transport } from '@tenure/protocol';
import { createEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions, type ListenAddress } from '@tenure/server';
import { fourLetterWord } from './four-letter-words.js';
import type { ServerDump } from './server-dump.js';

export type TestingEmbeddedServerOptions = EmbeddedServerOptions;

/** Longest a stopped server refuses connections before serving again on its own (setTimeout's limit). */
const STOPPED_MS = 2_147_483_647;

export class TestingEmbeddedServer {
  private stopped = false;

  private constructor(
    readonly server: EmbeddedServer,
    private readonly address: ListenAddress,
  ) {}

  static async start(options: TestingEmbeddedServerOptions = {}): Promise<TestingEmbeddedServer> {
    const server = createEmbeddedServer({ tickMs: 200, containerCheckIntervalMs: 100, ttlEnabled: true, ...options });
    try {
      return new TestingEmbeddedServer(server, await server.listen({ port: 0, host: '127.0.0.1' }));
    } catch (err) {
      await server.close();
      throw err;
    }
  }

  /** A transport that reaches the server in-process. */
  transport(): Transport {
    return this.server.transport();
  }

  /** '127.0.0.1:<port>': the server's TCP listener, for `zookeeper(connectString)` or any ZooKeeper client. */
  get connectString(): string {
    return this.address.connectString;
  }

  get port(): number {
    return this.address.port;
  }

  /** Any four-letter word the listener serves, e.g. 'srvr', 'mntr', 'dump'. */
  fourLetterWord(word: string): Promise<string> {
    return fourLetterWord(this.address.address, this.address.port, word);
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
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- never rejects: it resolves when serving again, or at close()
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
