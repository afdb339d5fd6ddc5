/**
 * The server on TLS: ZooKeeper's secureClientPort. The TCP listener's connection handler on a
 * `tls.Server`, so framing, four-letter words, limits, faults and bad-input rules are those of TCP
 * (tcp-listener.ts). What TLS adds: a client certificate the server verified authenticates the
 * connection as ZooKeeper's `x509` scheme, with the subject as Java's X500Principal.getName()
 * writes it (x509-subject.ts), as ZooKeeper's X509AuthenticationProvider does.
 *
 * A handshake that fails (garbage, a plaintext client, an unknown CA, a missing certificate
 * when one is required, a client that stops half way and is cut off after handshakeTimeoutMs)
 * costs only that socket (logged at debug level).
 */
import { createServer, type TLSSocket, type TlsOptions } from 'node:tls';
import type { FrontDoor, PeerInfo } from './front-door.js';
import { TcpListener } from './tcp-listener.js';
import { certificateSubject } from './x509-subject.js';

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
export function peerOf(socket: TLSSocket): PeerInfo {
  const address = socket.remoteAddress;
  if (!socket.authorized) return { address };
  const raw = socket.getPeerCertificate()?.raw;
  if (raw === undefined || raw.length === 0) return { address };
  return { address, x509Subject: certificateSubject(raw) };
}

export class TlsListener extends TcpListener {
  constructor(server: FrontDoor, options: TlsListenOptions, handshakeTimeoutMs = 10_000) {
    super(server, createServer({ ...options, handshakeTimeout: handshakeTimeoutMs }));
    this.handshakeTimeoutMs = handshakeTimeoutMs;
    this.netServer.on('secureConnection', (socket: TLSSocket) => {
      let peer: PeerInfo;
      try {
        peer = peerOf(socket);
      } catch (err) {
        // A certificate OpenSSL accepted but we cannot read: no identity rather than a guess.
        this.server.logger?.warn({ err, remote: socket.remoteAddress }, 'unreadable client certificate subject');
        socket.destroy();
        return;
      }
      this.adopt(socket, peer);
    });
    this.netServer.on('tlsClientError', (err: Error, socket: TLSSocket) => {
      this.server.logger?.debug?.({ err, remote: socket.remoteAddress }, 'TLS handshake failed');
      socket.destroy();
    });
  }
}
