/**
 * FaultProxy: a loopback TCP proxy in front of a server that can make real network faults per
 * client connection: blackhole (both directions go silent; bytes wait in the kernel, as in a
 * partition where TCP keeps retransmitting), reset (RST to the client and the server), and delay.
 * Faults live in the network between client and server, never inside the client.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { parseHostPort } from '@tenure/zookeeper';

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

  constructor(
    readonly id: number,
    private readonly client: Socket,
    private readonly target: { host: string; port: number },
    private readonly onGone: (c: ProxyConnection) => void,
  ) {
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
    const send = (): void => {
      if (this.closedFlag) return;
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
    const c = new ProxyConnection(this.nextId++, socket, this.target, (gone) => this.live.delete(gone));
    this.live.add(c);
    this.accepted.push(c);
    if (this.delayMs > 0) c.delay(this.delayMs);
    if (this.mode === 'blackhole') c.blackhole();
    else c.connectUpstream();
  }
}
