/**
 * FaultProxy: a loopback TCP proxy in front of a server that can make real network faults per
 * client connection: blackhole (both directions go silent; bytes wait in the kernel, as in a
 * partition where TCP keeps retransmitting), reset (RST to the client and the server), and delay.
 * Faults live in the network between client and server, never inside the client.
 *
 * On ZooKeeper connections it also reads the frames, so it can swallow exactly the reply to one
 * chosen request (`dropReply`): the request reaches the server and is applied, its reply never
 * reaches the client, and the connection is cut, as when a connection dies with a write in flight.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { parseHostPort } from '@tenure/zookeeper';
import { ZooKeeperFrames, matches, type ArmedDrop, type ClaimRequest, type DroppedReply, type ReplyMatch } from './fault-proxy-frames.js';

export type { DroppedReply, ReplyMatch, OpName } from './fault-proxy-frames.js';

type Mode = 'pass' | 'blackhole';

/** One proxied client connection. */
export class ProxyConnection {
  private mode: Mode = 'pass';
  private delayMs = 0;
  private upstream: Socket | undefined;
  private closedFlag = false;
  private readonly pendingUp: Buffer[] = [];
  /** Bytes forwarded client → server and server → client. */
  readonly bytes = { up: 0, down: 0 };
  private readonly frames: ZooKeeperFrames;
  /** A reply was swallowed: the connection closes once what came before it is flushed. */
  private cutting = false;

  constructor(
    readonly id: number,
    private readonly client: Socket,
    private readonly target: { host: string; port: number },
    private readonly onGone: (c: ProxyConnection) => void,
    claim: ClaimRequest = () => undefined,
  ) {
    this.frames = new ZooKeeperFrames(id, claim);
    client.setNoDelay(true);
    client.on('data', (chunk: Buffer) => this.forward(chunk, 'up'));
    client.on('end', () => this.upstream?.end());
    client.on('error', () => this.destroy());
    client.on('close', () => this.destroy());
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Opens the server side; deferred while blackholed (a partitioned SYN would not arrive either). */
  connectUpstream(): void {
    if (this.upstream || this.closedFlag) return;
    const up = (this.upstream = connect({ host: this.target.host, port: this.target.port, noDelay: true }));
    up.on('data', (chunk: Buffer) => this.forward(chunk, 'down'));
    up.on('end', () => this.client.end());
    up.on('error', () => this.destroy());
    up.on('close', () => this.destroy());
    for (const b of this.pendingUp.splice(0)) up.write(b);
    if (this.mode === 'blackhole') up.pause();
  }

  /** Silences both directions until `heal()`: nothing is read, so nothing is lost either. */
  blackhole(): void {
    this.mode = 'blackhole';
    this.client.pause();
    this.upstream?.pause();
  }

  /** Ends blackhole and delay. */
  heal(): void {
    this.mode = 'pass';
    this.delayMs = 0;
    if (!this.upstream) this.connectUpstream();
    this.client.resume();
    this.upstream?.resume();
  }

  /** Delays every chunk, both ways, by `ms` (order is kept). */
  delay(ms: number): void {
    this.delayMs = ms;
  }

  /** Sends a TCP RST to both sides. */
  reset(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.client.resetAndDestroy();
    this.upstream?.resetAndDestroy();
    this.onGone(this);
  }

  /** Closes both sides normally (FIN). */
  destroy(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.client.destroy();
    this.upstream?.destroy();
    this.onGone(this);
  }

  private forward(chunk: Buffer, dir: 'up' | 'down'): void {
    // After a swallowed reply nothing more passes either way: the connection is being cut.
    if (this.cutting) return;
    if (dir === 'up') {
      this.frames.sniffUp(chunk);
      this.pass(chunk, dir);
      return;
    }
    const { forward, dropped } = this.frames.filterDown(chunk);
    for (const piece of forward) this.pass(piece, dir);
    if (!dropped) return;
    this.cutting = true;
    this.upstream?.pause();
    // What was forwarded before the swallowed reply still reaches the client, then both sides close.
    this.pass(Buffer.alloc(0), dir, () => this.destroy());
  }

  private pass(chunk: Buffer, dir: 'up' | 'down', then?: () => void): void {
    const send = (): void => {
      if (this.closedFlag) return;
      if (then) {
        this.client.end(then);
        return;
      }
      this.bytes[dir] += chunk.length;
      if (dir === 'down') this.client.write(chunk);
      else if (this.upstream) this.upstream.write(chunk);
      else this.pendingUp.push(chunk);
    };
    if (this.delayMs > 0) setTimeout(send, this.delayMs);
    else send();
  }
}

/** A loopback proxy to `target` ('host:port'). Faults set on the proxy apply to current and future connections. */
export class FaultProxy {
  private readonly server: Server;
  private readonly live = new Set<ProxyConnection>();
  private nextId = 1;
  private mode: Mode = 'pass';
  private delayMs = 0;
  private readonly target: { host: string; port: number };
  private listenPort = 0;
  private listenHost = '127.0.0.1';
  /** Every connection accepted so far, in order. */
  readonly accepted: ProxyConnection[] = [];
  /** Drops waiting for their request, oldest first. */
  private readonly armed: ArmedDrop[] = [];
  /** Every reply swallowed so far, in order. */
  readonly droppedReplies: DroppedReply[] = [];

  private constructor(target: string) {
    this.target = parseHostPort(target);
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Starts a proxy in front of `target` on a free loopback port (`host`: another loopback address, e.g. 127.0.0.2). */
  static async start(target: string, { port = 0, host = '127.0.0.1' }: { port?: number; host?: string } = {}): Promise<FaultProxy> {
    const proxy = new FaultProxy(target);
    proxy.listenHost = host;
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(port, host, () => resolve());
    });
    proxy.listenPort = (proxy.server.address() as { port: number }).port;
    proxy.server.unref();
    return proxy;
  }

  /** '127.0.0.1:<port>': give this to the client instead of the server's address. */
  get address(): string {
    return `${this.listenHost}:${this.listenPort}`;
  }

  get connectString(): string {
    return this.address;
  }

  get port(): number {
    return this.listenPort;
  }

  /** The open connections, oldest first. */
  get connections(): ProxyConnection[] {
    return [...this.live];
  }

  /** Silences every connection, and every new one, until `heal()`. */
  blackhole(): void {
    this.mode = 'blackhole';
    for (const c of this.live) c.blackhole();
  }

  /** Ends blackhole and delay on every connection. */
  heal(): void {
    this.mode = 'pass';
    this.delayMs = 0;
    for (const c of this.live) c.heal();
  }

  /** Delays traffic of every connection, and every new one, by `ms` each way. */
  delay(ms: number): void {
    this.delayMs = ms;
    for (const c of this.live) c.delay(ms);
  }

  /**
   * Swallows the reply to the first request (on any connection, now or later) that `match`
   * describes, e.g. `{ op: 'create2', path: '/a' }` or `{ xid: 7 }`, and cuts that connection:
   * the server applied the request (or refused it), and the client never learns which. Resolves
   * once the reply has been swallowed. Only on ZooKeeper connections (not TLS).
   */
  dropReply(match: ReplyMatch): Promise<DroppedReply> {
    return new Promise((resolve) => {
      this.armed.push({
        match,
        resolve: (dropped) => {
          this.droppedReplies.push(dropped);
          resolve(dropped);
        },
      });
    });
  }

  /** Drops that are still waiting for their request. */
  get pendingDrops(): number {
    return this.armed.length;
  }

  /** Resets (RST) every open connection. New connections are still accepted. */
  reset(): void {
    for (const c of [...this.live]) c.reset();
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const c of [...this.live]) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private accept(socket: Socket): void {
    const claim: ClaimRequest = (xid, op, path) => {
      const i = this.armed.findIndex((d) => matches(d.match, xid, op, path));
      return i < 0 ? undefined : this.armed.splice(i, 1)[0];
    };
    const c = new ProxyConnection(this.nextId++, socket, this.target, (gone) => this.live.delete(gone), claim);
    this.live.add(c);
    this.accepted.push(c);
    if (this.delayMs > 0) c.delay(this.delayMs);
    if (this.mode === 'blackhole') c.blackhole();
    else c.connectUpstream();
  }
}
