/**
 * What a real-ZooKeeper test suite sets up around its tests: one TestingServer for the suite, the
 * clients each test opens (closed after it), and at most one FaultProxy per test (healed and closed
 * after it). Call `start`, `afterEach` and `close` from the suite's hooks.
 */
import { FaultProxy } from './fault-proxy.js';
import { TestClients } from './test-clients.js';
import { TestingServer } from './testing-server.js';
import { IllegalStateError } from '@tenure/protocol';

export class ZooKeeperSuite {
  private started: { server: TestingServer; clients: TestClients } | null = null;
  private proxy: FaultProxy | undefined;

  async start(): Promise<void> {
    const server = await TestingServer.start();
    this.started = { server, clients: new TestClients(() => server.transport()) };
  }

  get server(): TestingServer {
    return this.ready().server;
  }

  get clients(): TestClients {
    return this.ready().clients;
  }

  /** A FaultProxy in front of the server, for this test only. */
  async faultProxy(): Promise<FaultProxy> {
    this.proxy = await FaultProxy.start(this.server.connectString);
    return this.proxy;
  }

  async afterEach(): Promise<void> {
    this.proxy?.heal();
    await this.started?.clients.closeAll();
    await this.proxy?.close();
    this.proxy = undefined;
  }

  async close(): Promise<void> {
    await this.started?.server.close();
    this.started = null;
  }

  private ready(): { server: TestingServer; clients: TestClients } {
    if (this.started === null) throw new IllegalStateError('ZooKeeperSuite: call start() first (in beforeAll)');
    return this.started;
  }
}
