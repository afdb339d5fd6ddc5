/** Test harness: an embedded server with a short tick, and the clients and registries a test opens, closed after it. */
import type { Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { startTestServer, TestClients } from '@tenure/testing';
import { ServiceDiscovery, type ServiceDiscoveryOptions } from '../src/index.js';

export { eventually, sleep } from '@tenure/testing';

export class DiscoveryHarness {
  readonly server: EmbeddedServer = startTestServer();
  readonly clients = new TestClients(() => this.server.transport());
  private readonly registries: ServiceDiscovery[] = [];

  /** A started ServiceDiscovery on a client of its own. */
  async discovery(options: ServiceDiscoveryOptions = {}, client?: Client): Promise<{ client: Client; discovery: ServiceDiscovery }> {
    const c = client ?? (await this.clients.open());
    const discovery = new ServiceDiscovery(c, { rejoinJitterMs: 200, ...options });
    this.registries.push(discovery);
    await discovery.start();
    return { client: c, discovery };
  }

  /** Every node under `path` (full paths, depth first). */
  subtree(path: string): string[] {
    const n = this.server.node(path);
    if (!n) return [];
    return [...n.children].sort().flatMap((c) => {
      const p = path === '/' ? `/${c}` : `${path}/${c}`;
      return [p, ...this.subtree(p)];
    });
  }

  noWatches(): boolean {
    return this.server.sessions().every((s) => s.watches === 0);
  }

  async close(): Promise<void> {
    await Promise.all(this.registries.splice(0).map((d) => d.close()));
    await this.clients.closeAll();
    await this.server.close();
  }
}
