/**
 * The server on TCP: ZooKeeper's wire protocol (wire doc §2–§3) in front of the same front door
 * (front-door.ts: accept, receive) the in-process transport uses. Each socket becomes a socket link
 * (socket-link.ts) under a wire session (wire-session.ts), which holds every rule of the protocol:
 * the handshake, the xid, limits, flow control and close. Sessions, ordering, faults and the
 * maxBuffer rule stay behind the front door, so every front door behaves alike.
 *
 * The TLS listener (tls-listener.ts) is this listener on a `tls.Server`: only the socket it hands
 * over differs, along with what the front door learns of the peer (a verified client
 * certificate's subject).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { FrontDoor, PeerInfo } from './front-door.js';
import { SocketLink } from './socket-link.js';
import type { TlsListenOptions } from './tls-listener.js';
import { noTraffic } from './four-letter-words.js';
import type { WireDoor, WireSession } from './wire-session.js';

export interface ListenOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default '127.0.0.1' (an embedded server is local unless asked otherwise). */
  host?: string;
  backlog?: number;
  /**
   * A connection that has not completed a ConnectRequest (or a four-letter word) by then is closed,
   * as ZooKeeper closes sessionless connections (zookeeper.nio.sessionlessCnxnTimeout). Default 10,000 ms.
   */
  handshakeTimeoutMs?: number;
  /** Serve TLS on this port (ZooKeeper's secureClientPort) instead of plaintext; see TlsListenOptions. */
  tls?: TlsListenOptions;
}

/** Where a listener is bound. */
export interface ListenAddress extends AddressInfo {
  /** `host:port` for a ZooKeeper connect string (`[v6]:port` for IPv6). */
  connectString: string;
}

export class TcpListener implements WireDoor {
  protected readonly netServer: Server;
  readonly sessions = new Set<WireSession>();
  readonly startedAt = Date.now();
  /** Totals over every connection this listener served, for srvr/mntr. */
  readonly totals = noTraffic();
  private address: ListenAddress | undefined;
  private closing: Promise<void> | undefined;
  handshakeTimeoutMs = 10_000;

  /** `netServer`: a server of the caller's (the TLS listener's) that hands its sockets to `adopt`. */
  constructor(
    readonly server: FrontDoor,
    netServer?: Server,
  ) {
    this.netServer = netServer ?? createServer({ noDelay: true }, (socket) => this.adopt(socket, { address: socket.remoteAddress }));
    this.netServer.on('error', (err) => this.server.logger?.warn({ err }, 'listener error'));
  }

  listen(options: ListenOptions = {}): Promise<ListenAddress> {
    const host = options.host ?? '127.0.0.1';
    if (options.handshakeTimeoutMs !== undefined) this.handshakeTimeoutMs = options.handshakeTimeoutMs;
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.netServer.once('error', onError);
      this.netServer.listen({ port: options.port ?? 0, host, backlog: options.backlog }, () => {
        this.netServer.off('error', onError);
        const a = this.netServer.address() as AddressInfo;
        const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
        this.address = { ...a, connectString: `${h}:${a.port}` };
        resolve(this.address);
      });
    });
  }

  get bound(): ListenAddress | undefined {
    return this.address;
  }

  /**
   * Shutdown's first step: takes no new connections and reads no more requests; what was received
   * is still answered.
   */
  stopAccepting(): void {
    for (const s of this.sessions) s.drain();
    // The port closes at once; close()'s callback would wait for every open socket to end.
    if (this.netServer.listening) this.netServer.close();
  }

  /** Stops listening and destroys every socket (sessions were aborted by the server already). */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const s of [...this.sessions]) s.fail('gone');
      if (!this.netServer.listening) resolve();
      else this.netServer.close(() => resolve());
    });
    return this.closing;
  }

  /** Serves a connected socket (plaintext, or TLS once its handshake is done). */
  protected adopt(socket: Socket, peer?: PeerInfo): void {
    if (this.closing !== undefined || this.server.closed) {
      socket.destroy();
      return;
    }
    new SocketLink(this, socket, peer);
  }

  /** The connections, for the four-letter words. */
  get sockets(): ReadonlySet<WireSession> {
    return this.sessions;
  }
}
