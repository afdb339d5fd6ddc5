/** Test harness: an embedded server with a short tick, and clients that are closed after each test. */
import { EventEmitter } from 'node:events';
import { NoNodeError, type Client, type ClientOptions, type Transport } from '@tenure/client';
import { OpCode, type ConnectParams, type ConnectionHandlers, type Request } from '@tenure/protocol';
import type { EmbeddedServer, EmbeddedServerOptions } from '@tenure/server';
import { nextEvent, startTestServer, tapTransport, TestClients } from '@tenure/testing';
export { roundTrip } from '@tenure/testing';

export function startServer(options: EmbeddedServerOptions = {}): EmbeddedServer {
  return startTestServer({ containerCheckIntervalMs: 50, ...options });
}

/** Clients opened by a test, closed by `closeAll`; each on a tapped transport, so a test can await its exchanges. */
export class Clients extends TestClients {
  private readonly taps = new Map<Client, TappedTransport>();

  constructor(private readonly transportOf: () => Transport) {
    super(transportOf);
  }

  override async open(options: Partial<ClientOptions> = {}): Promise<Client> {
    const transport = tapped(options.transport ?? this.transportOf());
    const client = await super.open({ ...options, transport });
    this.taps.set(client, transport);
    return client;
  }

  /** The tapped transport `client` was opened on. */
  tap(client: Client): TappedTransport {
    const t = this.taps.get(client);
    if (t === undefined) throw new Error('not a client of this Clients');
    return t;
  }

  /** Resolves when the server has answered a request of `client` that `match` accepts. Call it before the action. */
  answered(client: Client, match: (request: Request) => boolean, timeoutMs?: number): Promise<Request> {
    return answered(this.tap(client), match, timeoutMs);
  }

  /** Resolves when `client` is waiting in the queue at `base`: its watch on a predecessor there was answered. */
  waiting(client: Client, base: string, timeoutMs?: number): Promise<Request> {
    return answered(this.tap(client), watchingUnder(base), timeoutMs);
  }

  /** Resolves when an acquire of `client` has listed the queue at `base` (its node is in it, and it has decided). */
  listed(client: Client, base: string, timeoutMs?: number): Promise<Request> {
    return answered(this.tap(client), listing(base), timeoutMs);
  }
}

/** Resolves when `signal` aborts (at once if it has). */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

/**
 * Resolves when the node at `path` is gone (the container reaper, a delete), seen through a getData
 * watch of `client`: none is left behind when the node is already gone.
 */
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

/** A watch event as a connection delivered it (server path). */
export interface SeenEvent {
  type: number;
  path: string;
}

/** Wraps a transport to record every watch event the server delivers on its connections. */
export function countingTransport(inner: Transport): Transport & { events: SeenEvent[] } {
  const events: SeenEvent[] = [];
  return {
    events,
    get hosts() {
      return inner.hosts;
    },
    connect(host: string, params: ConnectParams, handlers: ConnectionHandlers) {
      return inner.connect(host, params, {
        onClose: (reason) => handlers.onClose(reason),
        onEvent: (ev, zxid) => {
          events.push({ type: ev.type, path: ev.path });
          handlers.onEvent(ev, zxid);
        },
      });
    },
  };
}

export { eventually, sleep } from '@tenure/testing';

/** A request a tapped connection sent, or one the server answered (with the reply's err). */
export type TapListener = (request: Request, err?: number) => void;

/** A transport whose connections announce what they send ('request') and what the server answers ('reply'). */
export interface TappedTransport extends Transport {
  readonly wire: EventEmitter<{ request: [Request]; reply: [Request, number] }>;
}

/**
 * Wraps a transport so a test can await the exchange that causes what it checks (a waiter's watch
 * on its predecessor answered, a create sent) instead of polling for it. Requests still go to the
 * server unchanged; 'reply' is emitted once the client has taken the reply (and registered its watch).
 */
export function tapped(inner: Transport): TappedTransport {
  const wire = new EventEmitter<{ request: [Request]; reply: [Request, number] }>();
  const transport = tapTransport(inner, {
    request: (request) => wire.emit('request', request),
    reply: (request, reply) => wire.emit('reply', request, reply.err),
  });
  return Object.assign(transport, { wire });
}

/** Resolves when `transport`'s server has answered a request that `match` accepts. Call it before the action. */
export function answered(transport: TappedTransport, match: (request: Request) => boolean, timeoutMs = 5000): Promise<Request> {
  return nextEvent<Request>(transport.wire, 'reply', (request) => match(request), { timeoutMs });
}

/** Resolves when `transport` sends a request that `match` accepts. */
export function sent(transport: TappedTransport, match: (request: Request) => boolean, timeoutMs = 5000): Promise<Request> {
  return nextEvent<Request>(transport.wire, 'request', (request) => match(request), { timeoutMs });
}

const under = (path: string, base: string): boolean => path.startsWith(base + '/');
/** A lock acquire has listed the queue at `base` (server path): it has decided to hold or to wait. */
export const listing =
  (base: string) =>
  (r: Request): boolean =>
    (r.type === OpCode.getChildren || r.type === OpCode.getChildren2) && r.path === base;
/** A getData that sets a watch on a node under `base`: a waiter watching its predecessor. */
export const watchingUnder =
  (base: string) =>
  (r: Request): boolean =>
    r.type === OpCode.getData && r.watch && under(r.path, base);
/** A getChildren that sets a watch on `base` (a semaphore waiter watching its leases). */
export const watchingChildren =
  (base: string) =>
  (r: Request): boolean =>
    (r.type === OpCode.getChildren || r.type === OpCode.getChildren2) && r.watch && r.path === base;
/** Every node under `path` on an embedded server (full paths, depth first). */
export function subtree(server: EmbeddedServer, path: string): string[] {
  const n = server.node(path);
  if (!n) return [];
  const out: string[] = [];
  for (const c of [...n.children].sort()) {
    const p = path === '/' ? `/${c}` : `${path}/${c}`;
    out.push(p, ...subtree(server, p));
  }
  return out;
}

/** Nodes under `path` that are ephemeral (lock and lease nodes). */
export function ephemeralsUnder(server: EmbeddedServer, path: string): string[] {
  return subtree(server, path).filter((p) => (server.node(p)?.stat.ephemeralOwner ?? 0n) !== 0n);
}

/**
 * Two round trips in a row: whatever the server told `client` before has arrived, and whatever the
 * client sent in answer to it (a waiter's re-listing) has been answered too.
 */
export async function settledOn(client: Client): Promise<void> {
  await client.sync('/');
  await client.sync('/');
}

/** A pending acquire whose settling can be read synchronously, for "still waiting" checks behind a barrier. */
export function tracked<T>(promise: Promise<T>): { readonly promise: Promise<T>; readonly settled: boolean } {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    promise,
    get settled() {
      return settled;
    },
  };
}
