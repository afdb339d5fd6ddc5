/**
 * `zookeeper(connectString)`: the Transport that reaches Apache ZooKeeper over TCP.
 */
import type { ConnectParams, ConnectResult, ConnectionHandlers, Transport } from '@tenure/protocol';
import { formatHostPort, parseConnectString, parseHostPort } from './connect-string.js';
import { openConnection } from './connection.js';

export interface ZooKeeperTransportOptions {
  /**
   * The largest frame payload accepted from a server, bytes; a larger announced length closes the
   * connection with a ProtocolError. Default 16 MiB: ZooKeeper limits what it accepts to
   * jute.maxbuffer (1 MiB) but does not limit what it sends, and a getChildren of a large node can
   * exceed 1 MiB. The Java client's limit is 1 MiB.
   */
  maxFrameBytes?: number;
}

export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** The transport for a connect string such as `'10.0.0.1:2181,10.0.0.2:2181/app'`. */
export interface ZooKeeperTransport extends Transport {
  /** The chroot applied to every path, or '' when there is none. */
  readonly chroot: string;
}

/**
 * Returns a Transport to the servers of `connectString` (`host:port,...[/chroot]`, default port 2181).
 * Each `connect(host, ...)` opens one TCP connection to one of them; the client picks the host.
 */
export function zookeeper(connectString: string, options: ZooKeeperTransportOptions = {}): ZooKeeperTransport {
  const { hosts, chroot } = parseConnectString(connectString);
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < 64) {
    throw new RangeError(`maxFrameBytes must be an integer >= 64, got ${maxFrameBytes}`);
  }
  return {
    hosts: Object.freeze(hosts),
    chroot,
    connect(host: string, params: ConnectParams, handlers: ConnectionHandlers): Promise<ConnectResult> {
      let target;
      try {
        target = parseHostPort(host);
      } catch (error) {
        return Promise.reject(error);
      }
      return openConnection(target, formatHostPort(target), params, handlers, { chroot, maxFrameBytes });
    },
  };
}
