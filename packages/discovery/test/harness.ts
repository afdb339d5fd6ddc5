/** Test harness: an embedded server with a short tick, and the clients and registries a test opens, closed after it. */
import { NoNodeError, type Client, type ClientOptions, type Transport } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { nextEvent, startTestServer, TestClients, type ManualClock } from '@tenure/testing';
import { ServiceDiscovery, type ServiceCache, type ServiceDiscoveryOptions, type ServiceInstance } from '../src/index.js';
export { untilTree as untilChangedUnder, roundTrip } from '@tenure/testing';

export { eventually, sleep } from '@tenure/testing';

/** TestClients whose every client is on `clock` when one is given. */
class ClockedClients extends TestClients {
  constructor(
    transport: () => Transport,
    private readonly clock: ManualClock | undefined,
  ) {
    super(transport);
  }

  override open(options: Partial<ClientOptions> = {}): Promise<Client> {
    return super.open(this.clock ? { clock: this.clock, ...options } : options);
  }
}

export class DiscoveryHarness {
  readonly server: EmbeddedServer;
  readonly clients: TestClients;
  private readonly registries: ServiceDiscovery[] = [];

  /** With a ManualClock, the server, every client and the recipes on them (rejoins, retries, down instances) follow it. */
  constructor(readonly clock?: ManualClock) {
    this.server = startTestServer({ clock });
    this.clients = new ClockedClients(() => this.server.transport(), clock);
  }

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

/** Resolves once `done(cache.instances)` holds: now, or at the cache's next 'change' that makes it hold. */
export async function untilInstances<P>(
  cache: ServiceCache<P>,
  done: (instances: readonly ServiceInstance<P>[]) => boolean,
  timeoutMs = 5000,
): Promise<void> {
  const changed = nextEvent<readonly ServiceInstance<P>[]>(cache, 'change', (set) => done(set), { timeoutMs });
  if (done(cache.instances)) {
    changed.catch(() => {});
    return;
  }
  await changed;
}

/** Resolves when the node at `path` is gone, seen through a getData watch of `client` (none is left when it is gone already). */
export async function gone(client: Client, path: string): Promise<void> {
  let deleted!: () => void;
  const event = new Promise<void>((resolve) => (deleted = resolve));
  try {
    await client.getData(path, { watch: (ev) => ev.type === 'NodeDeleted' && deleted() });
  } catch (err) {
    if (err instanceof NoNodeError) return;
    throw err;
  }
  await event;
}
