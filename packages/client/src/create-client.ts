/** createClient: options → a client over the chosen transport (call start() to connect). */
import type { Transport } from '@tenure/protocol';
import { zookeeper } from '@tenure/zookeeper';
import { Client } from './client.js';
import { gzip } from './gzip-zlib.js';
import { ClientCore } from './client-core.js';
import { Namespace } from './namespace.js';
import type { ClientOptions } from './options.js';
import { InvalidArgumentError } from '@tenure/protocol';

/**
 * Creates a client. Give `transport` (any Transport, e.g. an embedded server's `transport()`) or
 * `connectString` ('h1:2181,h2:2181/chroot', which selects the ZooKeeper transport). Call
 * `start()` to connect.
 */
export function createClient(options: ClientOptions): Client {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('createClient: options are required');
  const { transport, connectString, tls, lookup } = options;
  if (transport !== undefined && connectString !== undefined)
    throw new InvalidArgumentError('createClient: give transport or connectString, not both');
  if (transport !== undefined && tls !== undefined)
    throw new InvalidArgumentError('createClient: tls goes with connectString (a transport brings its own)');
  if (transport !== undefined && lookup !== undefined)
    throw new InvalidArgumentError('createClient: lookup goes with connectString (a transport brings its own)');
  let t: Transport;
  if (transport !== undefined) {
    if (typeof transport.connect !== 'function') throw new InvalidArgumentError('createClient: transport must implement connect()');
    t = transport;
  } else if (typeof connectString === 'string' && connectString.length > 0) {
    t = zookeeper(connectString, { ...(tls === undefined ? {} : { tls }), ...(lookup === undefined ? {} : { lookup }) });
  } else {
    throw new InvalidArgumentError('createClient: a transport or a connectString is required');
  }
  const namespace = new Namespace(options.namespace);
  return new Client(new ClientCore(t, options, gzip), namespace, true);
}
