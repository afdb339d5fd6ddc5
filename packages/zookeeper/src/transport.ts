/**
 * `zookeeper(connectString, options)`: the Transport that reaches Apache ZooKeeper over TCP, or
 * over TLS (its secureClientPort) with `options.tls`.
 */
import type { ConnectParams, ConnectResult, ConnectionHandlers, Transport } from '@tenure/protocol';
import { formatHostPort, parseConnectString, parseHostPort } from './connect-string.js';
import { openConnection } from './connection.js';
import { resolveTarget, type HostLookup } from './host-lookup.js';
import { TlsConfig, type TlsSetting } from './tls-options.js';
import { InvalidArgumentError, IllegalStateError } from '@tenure/protocol';

export interface ZooKeeperTransportOptions {
  /**
   * The largest frame payload accepted from a server, bytes; a larger announced length closes the
   * connection with a ProtocolError. Default 16 MiB: ZooKeeper limits what it accepts to
   * jute.maxbuffer (1 MiB) but does not limit what it sends, and a getChildren of a large node can
   * exceed 1 MiB. The Java client's limit is 1 MiB.
   */
  maxFrameBytes?: number;
  /**
   * Connect over TLS: `true` for Node's defaults (the system's CAs), Node's `tls.ConnectionOptions`
   * (`ca`, `cert`, `key`, `servername`, `rejectUnauthorized`, `minVersion`, ...), or a function
   * returning them, called before every connection. The server's host name (or IP address) is
   * verified against its certificate unless `rejectUnauthorized: false`. A refused handshake
   * rejects `connect` with a TlsError naming the host and the reason.
   */
  tls?: TlsSetting;
  /**
   * Resolves a host name to its addresses, at every connect attempt (default: `dns.lookup` with
   * `all: true`); one address is picked at random, as ZooKeeper's client does. IP literals skip it.
   * A name that does not resolve rejects `connect` with ConnectionLossError whose `cause` is the
   * DNS error.
   */
  lookup?: HostLookup;
}

export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** The transport for a connect string such as `'10.0.0.1:2181,10.0.0.2:2181/app'`. */
export interface ZooKeeperTransport extends Transport {
  /** The chroot applied to every path, or '' when there is none. */
  readonly chroot: string;
  /** Whether connections use TLS. */
  readonly secure: boolean;
  /**
   * Replaces the TLS options for connections opened from now on (renewed certificates); open
   * connections keep theirs. Throws TypeError on a transport created without `tls`.
   */
  updateTls(tls: TlsSetting): void;
}

/**
 * Returns a Transport to the servers of `connectString` (`host:port,...[/chroot]`, default port 2181).
 * Each `connect(host, ...)` opens one TCP connection to one of them; the client picks the host.
 */
export function zookeeper(connectString: string, options: ZooKeeperTransportOptions = {}): ZooKeeperTransport {
  const { hosts, chroot } = parseConnectString(connectString);
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < 64) {
    throw new InvalidArgumentError(`maxFrameBytes must be an integer >= 64, got ${maxFrameBytes}`);
  }
  const tls = options.tls === undefined ? undefined : new TlsConfig(options.tls);
  return {
    hosts: Object.freeze(hosts),
    chroot,
    secure: tls !== undefined,
    updateTls(setting: TlsSetting): void {
      if (tls === undefined) throw new IllegalStateError('updateTls: this transport was created without tls');
      tls.update(setting);
    },
    async connect(host: string, params: ConnectParams, handlers: ConnectionHandlers): Promise<ConnectResult> {
      const target = parseHostPort(host);
      const server = formatHostPort(target);
      const tlsOptions = await tls?.resolve();
      const address = await resolveTarget(target, server, options.lookup);
      // Over TLS the certificate is checked against the name, not the address it resolved to.
      const tlsFor = tlsOptions && address.host !== target.host ? { servername: target.host, ...tlsOptions } : tlsOptions;
      return openConnection(address, server, params, handlers, { chroot, maxFrameBytes, tls: tlsFor });
    },
  };
}
