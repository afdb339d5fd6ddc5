/**
 * The server on TLS: ZooKeeper's secureClientPort. The TCP listener's connection handler on TLS
 * sockets, so framing, four-letter words, limits, faults and bad-input rules are those of TCP
 * (tcp-listener.ts). What TLS adds: a client certificate the server verified authenticates the
 * connection as ZooKeeper's `x509` scheme, with the subject as Java's X500Principal.getName()
 * writes it (x509-subject.ts), as ZooKeeper's X509AuthenticationProvider does.
 *
 * A handshake that fails (garbage, a plaintext client, a missing certificate when one is
 * required, a client that stops half way and is cut off after handshakeTimeoutMs) costs only that
 * socket (logged at debug level); OpenSSL has sent its alert (certificate_required, ...) by then.
 *
 * A certificate that is presented but does not verify (unknown CA, expired) is the case Node's TLS
 * cannot refuse with an alert: its OpenSSL verify callback accepts every chain, and `tls.Server`
 * with rejectUnauthorized then destroys the socket after the handshake, so the client sees only a
 * closed connection. So each socket is a `TLSSocket` of ours (Node's verify mode, hence the
 * certificate_required alert, unchanged) and such a client gets an in-band refusal instead: one
 * bare reply header with AUTHFAILED in place of the ConnectResponse, then close_notify. Tenure's
 * transport reports it as a TlsError (`certificate-refused`); other clients see a failed handshake.
 */
import { createServer as createNetServer, type Socket } from 'node:net';
import { TLSSocket, type SecureContext, type TlsOptions } from 'node:tls';
import type { FrontDoor, PeerInfo } from './front-door.js';
import { TcpListener } from './tcp-listener.js';
import { certificateSubject } from '../security/x509-subject.js';
import { certificateRefusalFrame, serverContext, verifyErrorOf } from '../security/tls-refusal.js';

/**
 * What `server.listen({ tls })` takes: Node's `tls.TlsOptions`, of which these matter most.
 * With `requestCert`, clients are asked for a certificate; with `rejectUnauthorized` (the default
 * then) one that does not chain to `ca`, or none at all, ends the connection.
 */
export interface TlsListenOptions extends TlsOptions {
  /** The server's private key (PEM). */
  key?: TlsOptions['key'];
  /** The server's certificate chain (PEM). */
  cert?: TlsOptions['cert'];
  /** CAs that client certificates must chain to; default Node's trusted CAs. */
  ca?: TlsOptions['ca'];
  /** Ask clients for a certificate (ZooKeeper's ssl.clientAuth=want/need). Default false. */
  requestCert?: boolean;
  /** With requestCert: refuse clients without a valid certificate (ssl.clientAuth=need). Default true. */
  rejectUnauthorized?: boolean;
}

/** ZooKeeper's x509 identity of a TLS socket: its verified client certificate's subject, if any. */
export function peerOf(socket: TLSSocket, verified = socket.authorized): PeerInfo {
  const address = socket.remoteAddress;
  if (!verified) return { address };
  const raw = socket.getPeerCertificate()?.raw;
  if (raw === undefined || raw.length === 0) return { address };
  return { address, x509Subject: certificateSubject(raw) };
}

/** How long a refused client has to read its refusal before the socket is destroyed. */
const REFUSAL_LINGER_MS = 2000;

export class TlsListener extends TcpListener {
  private readonly context: SecureContext;
  private readonly requestCert: boolean;
  private readonly rejectUnauthorized: boolean;
  /** Sockets in their TLS handshake or being refused: not yet connections, still ours to close. */
  private readonly unadopted = new Set<Socket>();

  constructor(
    server: FrontDoor,
    private readonly options: TlsListenOptions,
    handshakeTimeoutMs = 10_000,
  ) {
    super(server, createNetServer({ noDelay: true }));
    this.handshakeTimeoutMs = handshakeTimeoutMs;
    this.context = options.secureContext ?? serverContext(options);
    this.requestCert = options.requestCert === true;
    this.rejectUnauthorized = options.rejectUnauthorized !== false;
    this.netServer.on('connection', (raw: Socket) => this.handshake(raw));
  }

  private handshake(raw: Socket): void {
    const socket = new TLSSocket(raw, {
      ...this.options,
      isServer: true,
      secureContext: this.context,
      requestCert: this.requestCert,
      rejectUnauthorized: this.rejectUnauthorized,
    });
    this.unadopted.add(raw);
    const timer = setTimeout(() => socket.destroy(), this.handshakeTimeoutMs);
    const onError = (err: Error): void => {
      this.server.logger?.debug?.({ err, remote: raw.remoteAddress }, 'TLS handshake failed');
      socket.destroy();
    };
    socket.on('error', onError);
    raw.once('close', () => {
      clearTimeout(timer);
      this.unadopted.delete(raw);
    });
    socket.once('secure', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      this.secured(socket, raw);
    });
  }

  private secured(socket: TLSSocket, raw: Socket): void {
    // Verified as Node's tls.Server does it (authorized / authorizationError), but not destroyed.
    const verifyError = this.requestCert ? verifyErrorOf(socket) : undefined;
    if (verifyError !== undefined && this.rejectUnauthorized) {
      this.server.logger?.debug?.({ remote: raw.remoteAddress, reason: verifyError }, 'TLS client certificate refused');
      socket.on('error', () => socket.destroy());
      socket.end(certificateRefusalFrame());
      setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS).unref();
      return;
    }
    let peer: PeerInfo;
    try {
      peer = peerOf(socket, this.requestCert && verifyError === undefined);
    } catch (err) {
      // A certificate OpenSSL accepted but we cannot read: no identity rather than a guess.
      this.server.logger?.warn({ err, remote: raw.remoteAddress }, 'unreadable client certificate subject');
      socket.destroy();
      return;
    }
    this.unadopted.delete(raw);
    this.adopt(socket, peer);
  }

  override close(): Promise<void> {
    for (const raw of [...this.unadopted]) raw.destroy();
    return super.close();
  }
}
