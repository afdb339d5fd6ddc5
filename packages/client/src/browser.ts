/**
 * @tenure/client for browsers and edge runtimes (the package's "browser" export condition): the
 * same API as in Node, except that createClient needs a `transport` (e.g. `webSocket(url)` from
 * @tenure/ws), since a `connectString` selects the ZooKeeper TCP transport, which needs Node. No
 * `node:` import and no @tenure/zookeeper in this module graph; a bundler supplies `Buffer` (see
 * the README's Browser section).
 */
import type { Transport } from '@tenure/protocol';
import { Client } from './client.js';
import { gzipStreams } from './gzip-streams.js';
import { ClientCore } from './client-core.js';
import { Namespace } from './namespace.js';
import type { ClientOptions } from './options.js';
import { InvalidArgumentError } from '@tenure/protocol';

export * from './public-api.js';
/** The browser's gzip: CompressionStream, with the bytes of Curator's GzipCompressionProvider. */
export { gzipStreams as gzip } from './gzip-streams.js';

/**
 * Creates a client over `options.transport` (call `start()` to connect):
 *
 * ```ts
 * const client = createClient({ transport: webSocket('wss://zk.example.com/zookeeper') });
 * ```
 * @throws TypeError for a `connectString` or `tls` (no TCP in a browser) or a missing transport.
 */
export function createClient(options: ClientOptions): Client {
  const transport: Transport | undefined = options?.transport;
  if (options?.connectString !== undefined) {
    throw new InvalidArgumentError(
      'createClient: a connectString needs the ZooKeeper TCP transport, which needs Node; in a browser give transport: webSocket(url) from @tenure/ws',
    );
  }
  if ((options as { tls?: unknown }).tls !== undefined) {
    throw new InvalidArgumentError(
      "createClient: tls goes with a connectString, which needs Node; in a browser wss:// uses the browser's trust store",
    );
  }
  if (transport === undefined || typeof transport.connect !== 'function')
    throw new InvalidArgumentError('createClient: a transport is required (e.g. webSocket(url) from @tenure/ws)');
  return new Client(new ClientCore(transport, options, gzipStreams), new Namespace(options.namespace), true);
}
