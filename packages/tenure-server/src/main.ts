/**
 * The `tenure-server` process: the embedded server as a standalone ZooKeeper-compatible server.
 * It reads zoo.cfg and flags (config.ts, flags.ts), logs JSON lines to stdout with pino, serves
 * Prometheus metrics under ZooKeeper's names (metrics.ts), and on SIGTERM or SIGINT stops
 * accepting, answers what is in flight, closes (which syncs durable storage) and exits 0.
 *
 * Exit codes: 0 after a signal, 2 for a configuration error (as ZooKeeper's INVALID_INVOCATION),
 * 1 when the server cannot start or fails.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { pino, type Logger as PinoLogger } from 'pino';
import type { EtcdStore } from '@tenure/etcd';
import {
  createEmbeddedServer,
  createReplicatedServer,
  type DataDirOptions,
  type EmbeddedServer,
  type EmbeddedServerOptions,
  type ListenAddress,
  type StorageEvent,
  type WebSocketAddress,
} from '@tenure/server';
import { ConfigError, sessionTimeouts, settingsFrom, type ServerSettings } from './config.js';
import { helpText, parseCommandLine } from './flags.js';
import { parseProperties } from './properties.js';
import { readSaslUsers } from './sasl-users.js';
import { beginRecovery, endRecovery } from './recovery-heap.js';
import { tlsServerOptions } from './tls-stores.js';

/** The package's version, from its package.json (one level above src/ and dist/). */
export function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Reads the command line and the config file into settings; throws ConfigError. */
export function loadSettings(argv: readonly string[]): { settings: ServerSettings; warnings: string[]; help: boolean; version: boolean } {
  const cli = parseCommandLine(argv);
  if (cli.help || cli.version)
    return { settings: settingsFrom(undefined, []).settings, warnings: [], help: cli.help, version: cli.version };
  let file: { path: string; entries: ReturnType<typeof parseProperties> } | undefined;
  if (cli.config !== undefined) {
    let text: string;
    try {
      text = readFileSync(cli.config, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read the config file ${cli.config}: ${(err as Error).message}`);
    }
    file = { path: cli.config, entries: parseProperties(text) };
  }
  const { settings, warnings } = settingsFrom(file, cli.values, cli.logLevel === undefined ? {} : { logLevel: cli.logLevel });
  settings.saslUsers = readSaslUsers({ jaasConfig: settings.jaasConfig, usersFile: settings.saslUsersFile });
  if (settings.secureClientPort !== undefined || settings.webSocketSecure) settings.tls = tlsServerOptions(settings.ssl);
  return { settings, warnings, help: false, version: false };
}

/** The durable storage options, under createEmbeddedServer's names (@tenure/server's DataDirOptions). */
export function storageOptions(s: ServerSettings): Partial<DataDirOptions> {
  if (s.dataDir === undefined) return {};
  return {
    dataDir: s.dataDir,
    ...(s.dataLogDir === undefined ? {} : { dataLogDir: s.dataLogDir }),
    snapCount: s.snapCount,
    preAllocSize: s.preAllocSize,
    forceSync: s.forceSync,
    autopurge: { snapRetainCount: s.autopurge.snapRetainCount, purgeIntervalHours: s.autopurge.purgeIntervalHours },
  };
}

/** The embedded server's options for these settings. */
export function serverOptions(
  s: ServerSettings,
  logger: EmbeddedServerOptions['logger'],
  onStorageEvent?: (event: StorageEvent) => void,
): EmbeddedServerOptions {
  return {
    ...(onStorageEvent === undefined ? {} : { onStorageEvent }),
    name: 'tenure-server',
    tickMs: s.tickTime,
    ...sessionTimeouts(s),
    maxBufferBytes: s.juteMaxBuffer,
    ttlEnabled: s.extendedTypesEnabled,
    containerCheckIntervalMs: s.containerCheckIntervalMs,
    maxClientCnxns: s.maxClientCnxns,
    globalOutstandingLimit: s.globalOutstandingLimit,
    fourLetterWords: s.fourLetterWords,
    ...(s.saslUsers === undefined ? {} : { sasl: { users: s.saslUsers } }),
    logger,
    ...storageOptions(s),
  };
}

/** The etcd store of these settings: TLS from the etcd.tls.* files, the compactor when etcd.compaction.retention is set. */
async function etcdStore(s: ServerSettings, endpoints: string[], logger: PinoLogger): Promise<EtcdStore> {
  const { EtcdRpc, EtcdStore } = await import('@tenure/etcd');
  const read = (key: string, file: string | undefined): Buffer | undefined => {
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError(`cannot read ${key} ${file}: ${(err as Error).message}`, key);
    }
  };
  const t = s.etcdTls;
  const tls =
    t.ca === undefined && t.cert === undefined
      ? undefined
      : { ca: read('etcd.tls.ca', t.ca), cert: read('etcd.tls.cert', t.cert), key: read('etcd.tls.key', t.key) };
  const compaction =
    s.etcdCompactionRetention === undefined ? undefined : { retention: s.etcdCompactionRetention, intervalMs: s.etcdCompactionIntervalMs };
  return new EtcdStore(new EtcdRpc(endpoints, tls === undefined ? {} : { tls }), s.etcdPrefix, { logger, compaction });
}

/** What recovery found, for the `serving` line (zxids in ZooKeeper's hex). */
function recoveredFields(server: EmbeddedServer): Record<string, unknown> {
  const stats = server.storageStats;
  if (stats === undefined) return {};
  const hex = (z: bigint | undefined): string | undefined => (z === undefined ? undefined : `0x${z.toString(16)}`);
  return {
    zxid: hex(server.zxid),
    snapshotZxid: hex(stats.recovered.snapshotZxid),
    txnsReplayed: stats.recovered.replayed,
    sessions: server.sessions().length,
  };
}

/** A running tenure-server. */
export interface RunningServer {
  server: EmbeddedServer;
  address: ListenAddress;
  /** The TLS listener, with secureClientPort. */
  secure: ListenAddress | undefined;
  /** The WebSocket listener, with webSocketPort. */
  webSocket: WebSocketAddress | undefined;
  metricsPort: number | undefined;
  /** Stops accepting, answers what is in flight, closes. */
  stop(): Promise<void>;
}

/** Starts the server for `settings` (no signal handlers: see main()); silent without a logger. */
export async function startServer(
  settings: ServerSettings,
  logger: PinoLogger = pino({ level: 'silent' }),
  onStorageEvent?: (event: StorageEvent) => void,
): Promise<RunningServer> {
  // With a data dir this recovers it first (and throws, naming the file and offset, on damage);
  // with etcd it loads the namespace into its mirror first.
  const options = serverOptions(settings, logger.child({ component: 'server' }), onStorageEvent);
  // @tenure/etcd (gRPC, protobuf) and prom-client are loaded only when configured: importing them
  // costs a few hundred ms of start-up, which a restart would otherwise pay before it recovers.
  const server =
    settings.etcdEndpoints === undefined
      ? createEmbeddedServer(options)
      : await createReplicatedServer(await etcdStore(settings, settings.etcdEndpoints, logger.child({ component: 'etcd' })), options);
  let metricsServer: Server | undefined;
  try {
    const address = await server.listen({ port: settings.clientPort, host: settings.clientPortAddress });
    const secure =
      settings.secureClientPort === undefined
        ? undefined
        : await server.listen({
            port: settings.secureClientPort,
            host: settings.secureClientPortAddress ?? settings.clientPortAddress,
            tls: settings.tls!,
          });
    const webSocket =
      settings.webSocketPort === undefined
        ? undefined
        : await server.listen({
            port: settings.webSocketPort,
            host: settings.webSocketPortAddress ?? settings.clientPortAddress,
            ...(settings.webSocketSecure ? { tls: settings.tls! } : {}),
            webSocket: {
              ...(settings.webSocketPath === undefined ? {} : { path: settings.webSocketPath }),
              ...(settings.webSocketOrigins === undefined ? {} : { origins: settings.webSocketOrigins }),
            },
          });
    let metricsPort: number | undefined;
    if (settings.metricsPort !== undefined) {
      const { ServerMetrics, serveMetrics } = await import('./metrics.js');
      const served = await serveMetrics(new ServerMetrics(server), settings.metricsPort, settings.metricsHost);
      metricsServer = served.server;
      metricsPort = served.port;
    }
    const stop = async (): Promise<void> => {
      const closingMetrics =
        metricsServer === undefined ? undefined : new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
      metricsServer?.closeAllConnections();
      await server.shutdown();
      await closingMetrics;
    };
    return { server, address, secure, webSocket, metricsPort, stop };
  } catch (err) {
    metricsServer?.close();
    await server.close();
    throw err;
  }
}

/**
 * Runs tenure-server with `argv` (without node and the script) until SIGTERM or SIGINT, then exits
 * the process. Configuration errors go to stderr as one line naming the key.
 */
export async function main(argv: readonly string[]): Promise<void> {
  let loaded: ReturnType<typeof loadSettings>;
  try {
    loaded = loadSettings(argv);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`tenure-server: ${err.message}\n`);
    process.exit(2);
  }
  if (loaded.help) {
    process.stdout.write(helpText());
    return;
  }
  if (loaded.version) {
    process.stdout.write(`tenure-server ${version()}\n`);
    return;
  }
  const { settings, warnings } = loaded;
  // Synchronous writes: nothing logged is lost when the process exits right after.
  const logger = pino(
    { level: settings.logLevel, base: { name: 'tenure-server', pid: process.pid } },
    pino.destination({ fd: 1, sync: true }),
  );
  for (const w of warnings) logger.warn(w);
  if (settings.etcdEndpoints !== undefined) {
    logger.info(
      { etcd: settings.etcdEndpoints, prefix: settings.etcdPrefix, compactionRetention: settings.etcdCompactionRetention ?? 'off' },
      'the tree, sessions and sequence counters live in etcd; run etcd with --auto-compaction-* (or set etcd.compaction.retention), a --quota-backend-bytes that fits and --max-txn-ops raised (see @tenure/etcd README)',
    );
  } else if (settings.dataDir === undefined) logger.info('no dataDir: the data is kept in memory and lost when the process stops');

  // The handlers go in before anything listens: a signal sent as soon as `serving` is read (or
  // during start-up) must find them, or Node's default action kills the process.
  let running: RunningServer | undefined;
  let stopping = false;
  const stop = (server: RunningServer): void => {
    server.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // During start-up: it stops as soon as it has started (and has synced what recovery wrote).
    if (running !== undefined) stop(running);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const fatal = (err: unknown): void => {
    logger.fatal({ err }, 'uncaught error');
    process.exit(1);
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);

  beginRecovery();
  try {
    running = await startServer(settings, logger, (event) => {
      // A log that cannot be written or synced: the server answers nothing more; leave, as ZooKeeper does.
      if (event.kind === 'failed') {
        logger.fatal({ err: event.error }, 'the transaction log failed; exiting');
        process.exit(1);
      }
    });
  } catch (err) {
    logger.fatal({ err }, 'tenure-server could not start');
    process.exit(1);
  }
  if (stopping) {
    stop(running);
    return;
  }
  // Recovered from a snapshot: collect its garbage before the first request is answered (see
  // recovery-heap.ts). A tenth of a second at a million nodes, where waiting for the collector
  // held ~30 MB more until the start-up snapshot had been written, seconds later.
  endRecovery(running.server.storageStats?.recovered?.snapshotZxid !== undefined);
  logger.info(
    {
      port: running.address.port,
      address: running.address.address,
      connectString: running.address.connectString,
      metricsPort: running.metricsPort,
      securePort: running.secure?.port,
      webSocketPort: running.webSocket?.port,
      webSocketUrl: running.webSocket?.url,
      saslUsers: settings.saslUsers === undefined ? undefined : Object.keys(settings.saslUsers).length,
      dataDir: settings.dataDir,
      dataLogDir: settings.dataLogDir,
      ...recoveredFields(running.server),
      version: version(),
    },
    'serving',
  );
}
