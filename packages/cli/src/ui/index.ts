/**
 * `tenure ui`: a web page that shows who holds what (locks with their queues, elections with a
 * timeline, groups, services, queues, sessions) and a lazy tree browser, live.
 *
 * ```ts
 * const ui = await startUi({ client, connectString: 'zk1:2181', port: 8181 });
 * console.log(`open ${ui.url}`);
 * await ui.closed;   // until close() or the signal
 * ```
 *
 * - Listens on 127.0.0.1 unless `host` says otherwise; any other address needs `uiAuth`.
 * - Read-only unless `write`; writes need the page's CSRF token and a same-origin request.
 * - One persistent recursive watch feeds every open page over server-sent events; against a server
 *   without persistent watches the pages poll, and say so.
 */
import { createServer, type Server } from 'node:http';
import { isIP } from 'node:net';
import { TenureError, type Client } from '@tenure/client';
import { sessionHex } from '../inspect/index.js';
import type { UiStatus } from './api-types.js';
import { LiveFeed } from './live-feed.js';
import { recipeOverview } from './overview-source.js';
import { RequestGuard } from './request-guard.js';
import { handleRequest } from './ui-server.js';

export type * from './api-types.js';

export interface UiOptions {
  /** A started client; the page server uses it and leaves it open on close(). */
  client: Client;
  /** The connect string the client uses: shown on the page, and its servers are asked `cons` / `dump`. */
  connectString?: string;
  /** Port to listen on; default 8181 (0 picks a free one). */
  port?: number;
  /** Address to listen on; default 127.0.0.1. Anything but loopback requires `uiAuth`. */
  host?: string;
  /** Allow writes (create, set, delete) from the Tree view. Default false. */
  write?: boolean;
  /** `user:password` for HTTP basic auth on every request. */
  uiAuth?: string;
  /** Where the recipe walk starts; default '/'. */
  path?: string;
  /** The recipe walk's node limit (default: the inspect module's). */
  limit?: number;
  /** How often pages poll when the server refuses persistent watches (ms); default 1000. */
  pollMs?: number;
  /** Aborting it closes the page server. */
  signal?: AbortSignal;
}

/** A running page server. */
export interface UiServer {
  /** `http://host:port/`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** How changes reach the pages. */
  readonly live: UiStatus['live'];
  /** Resolves once the server has closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options that cannot work together (e.g. `--host 0.0.0.0` without `--ui-auth`). The CLI exits 2. */
export class UiOptionsError extends TenureError {
  override name = 'UiOptionsError';
  constructor(message = 'these ui options cannot work together') {
    super('UI_OPTIONS', message);
  }
}

export const DEFAULT_UI_PORT = 8181;

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

function checkOptions(options: UiOptions): { host: string; port: number } {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? DEFAULT_UI_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UiOptionsError(`--port ${port}: not a port number`);
  if (options.uiAuth !== undefined && !/^[^:]+:.+$/.test(options.uiAuth)) {
    throw new UiOptionsError('--ui-auth takes user:password');
  }
  if (!isLoopback(host) && options.uiAuth === undefined) {
    throw new UiOptionsError(`--host ${host} makes the page reachable from other machines: it needs --ui-auth user:password`);
  }
  return { host, port };
}

/** Starts the page server; resolves once it listens and the first overview is taken. */
export async function startUi(options: UiOptions): Promise<UiServer> {
  const { host, port } = checkOptions(options);
  const loopback = isLoopback(host);
  const { client } = options;
  const guard = new RequestGuard({
    write: options.write === true,
    loopback,
    ...(options.uiAuth !== undefined ? { uiAuth: options.uiAuth } : {}),
  });
  const feed = new LiveFeed(
    client,
    recipeOverview(client, {
      ...(options.path !== undefined ? { path: options.path } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      ...(options.connectString !== undefined ? { connectString: options.connectString } : {}),
    }),
    options.pollMs !== undefined ? { pollMs: options.pollMs } : {},
  );
  await feed.start();

  let listen = '';
  const status = (): UiStatus => ({
    live: feed.mode,
    liveReason: feed.reason,
    pollMs: feed.pollMs,
    write: guard.writable,
    auth: options.uiAuth !== undefined,
    exposed: !loopback,
    listen,
    zookeeper: options.connectString ?? 'in-process',
    sessionId: sessionHex(client.sessionId),
  });
  const server: Server = createServer((req, res) => void handleRequest(req, res, { client, feed, guard, status }));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await feed.close();
    throw err;
  }
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  listen = `${urlHost}:${boundPort}`;

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      options.signal?.removeEventListener('abort', onAbort);
      await feed.close();
      // Event streams never end by themselves: close every connection, then the listener.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      resolveClosed();
    })());
  const onAbort = (): void => void close();
  if (options.signal?.aborted) await close();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  return {
    url: `http://${listen}/`,
    host,
    port: boundPort,
    live: feed.mode,
    closed,
    close,
    [Symbol.asyncDispose]: close,
  };
}
