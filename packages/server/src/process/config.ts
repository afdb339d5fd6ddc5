/**
 * tenure-server's configuration: ZooKeeper's zoo.cfg keys where they apply, so an existing config
 * works, with command-line flags over them (flags.ts). One table (`KEYS`) holds every key: its
 * parser, default, flag and help line; `--help` and the README are written from it.
 *
 * - An unknown key is a warning (ZooKeeper passes unknown keys on as system properties).
 * - A bad value is a ConfigError that names the key (and the file and line, or the flag).
 * - Ensemble keys (`server.N`, `initLimit`, `syncLimit`, …) are a ConfigError: this is a
 *   standalone server; a larger deployment moves to a ZooKeeper ensemble.
 * - Keys for features this build does not have yet (TLS, SASL, WebSocket) are parsed, so a bad
 *   value still names its key, then refused with a message saying so.
 */
import { DEFAULT_MAX_BUFFER } from '@tenure/protocol';
import type { PropertyEntry } from './properties.js';

/** A configuration that cannot be served: the message names the key and where it came from. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    /** The zoo.cfg key concerned, when there is one. */
    readonly key?: string,
  ) {
    super(message);
  }
}

/** Log levels pino knows. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Everything the process needs, resolved from zoo.cfg and flags. */
export interface ServerSettings {
  clientPort: number;
  /** Where the client port listens; ZooKeeper's default is every address. */
  clientPortAddress: string;
  tickTime: number;
  /** -1 (ZooKeeper's default): 2 ticks. */
  minSessionTimeout: number;
  /** -1 (ZooKeeper's default): 20 ticks. */
  maxSessionTimeout: number;
  maxClientCnxns: number;
  globalOutstandingLimit: number;
  /** Absent: the server runs in memory. */
  dataDir: string | undefined;
  /** Absent: the transaction log goes in dataDir. */
  dataLogDir: string | undefined;
  snapCount: number;
  /** KiB, as ZooKeeper's key. */
  preAllocSize: number;
  forceSync: boolean;
  autopurge: { snapRetainCount: number; purgeIntervalHours: number };
  /** The four-letter words answered; `'*'` for all. */
  fourLetterWords: readonly string[] | '*';
  extendedTypesEnabled: boolean;
  juteMaxBuffer: number;
  /** How often empty containers and expired TTL nodes are reaped, ms. */
  containerCheckIntervalMs: number;
  /** Prometheus text at http://metricsHost:metricsPort/metrics; absent: no metrics server. */
  metricsPort: number | undefined;
  metricsHost: string;
  logLevel: LogLevel;
  /** TLS, SASL and WebSocket keys, parsed but not served by this build (see `unsupported`). */
  secureClientPort: number | undefined;
  secureClientPortAddress: string | undefined;
  ssl: Record<string, string>;
  saslUsersFile: string | undefined;
  webSocketPort: number | undefined;
  webSocketPath: string | undefined;
}

/** The four-letter words ZooKeeper 3.8 knows. */
export const FOUR_LETTER_WORDS = ['conf', 'cons', 'crst', 'dirs', 'dump', 'envi', 'gtmk', 'ruok', 'stmk', 'srst', 'srvr', 'stat', 'wchc', 'wchp', 'wchs', 'mntr', 'isro', 'hash'];

export function defaultSettings(): ServerSettings {
  return {
    clientPort: 2181,
    clientPortAddress: '0.0.0.0',
    tickTime: 3000,
    minSessionTimeout: -1,
    maxSessionTimeout: -1,
    maxClientCnxns: 60,
    globalOutstandingLimit: 1000,
    dataDir: undefined,
    dataLogDir: undefined,
    snapCount: 100_000,
    preAllocSize: 65_536,
    forceSync: true,
    autopurge: { snapRetainCount: 3, purgeIntervalHours: 0 },
    fourLetterWords: ['srvr'],
    extendedTypesEnabled: false,
    juteMaxBuffer: DEFAULT_MAX_BUFFER,
    containerCheckIntervalMs: 60_000,
    metricsPort: undefined,
    metricsHost: '0.0.0.0',
    logLevel: 'info',
    secureClientPort: undefined,
    secureClientPortAddress: undefined,
    ssl: {},
    saslUsersFile: undefined,
    webSocketPort: undefined,
    webSocketPath: undefined,
  };
}

// ---- value parsers: each returns the value or throws a bare message, which gets the key added ----

function int(min: number, max = Number.MAX_SAFE_INTEGER): (v: string) => number {
  return (v) => {
    if (!/^-?\d+$/.test(v)) throw new Error(`${JSON.stringify(v)} is not a whole number`);
    const n = Number(v);
    if (n < min || n > max) throw new Error(`${n} is out of range (${min}…${max === Number.MAX_SAFE_INTEGER ? '' : max})`);
    return n;
  };
}
const port = (v: string): number => int(0, 65535)(v);
function bool(v: string): boolean {
  const s = v.toLowerCase();
  if (s === 'yes' || s === 'true') return true;
  if (s === 'no' || s === 'false') return false;
  throw new Error(`${JSON.stringify(v)} is not yes/no or true/false`);
}
function nonEmpty(v: string): string {
  if (v === '') throw new Error('is empty');
  return v;
}
function words(v: string): readonly string[] | '*' {
  const list = v.split(',').map((w) => w.trim()).filter((w) => w !== '');
  if (list.includes('*')) return '*';
  const bad = list.filter((w) => !FOUR_LETTER_WORDS.includes(w));
  if (bad.length > 0) throw new Error(`${bad.map((w) => JSON.stringify(w)).join(', ')} not a four-letter word (${FOUR_LETTER_WORDS.join(', ')}, or *)`);
  return list;
}

/** One configuration key: its zoo.cfg name, its flag, how it applies, its help line. */
export interface ConfigKey {
  key: string;
  flag?: string;
  /** The flag's value placeholder in --help. */
  arg: string;
  help: string;
  apply(s: ServerSettings, value: string): void;
  /** Why this build refuses the key once parsed (TLS, SASL, WebSocket not here yet). */
  unsupported?: string;
}

const TLS_MISSING = 'TLS is not served by this build of tenure-server yet (it comes with the connections issue): remove the key, or use a ZooKeeper server for TLS';
const SASL_MISSING = 'SASL is not served by this build of tenure-server yet (it comes with the connections issue): remove the key, or use a ZooKeeper server for SASL';
const WS_MISSING = 'WebSocket is not served by this build of tenure-server yet (it comes with the connections issue): remove the key';

const sslKey = (name: string, help: string): ConfigKey => ({
  key: name,
  arg: 'value',
  help,
  apply: (s, v) => void (s.ssl[name] = nonEmpty(v)),
  unsupported: TLS_MISSING,
});

/** Every key tenure-server reads, in --help order. */
export const KEYS: readonly ConfigKey[] = [
  { key: 'clientPort', flag: 'port', arg: 'port', help: 'client port (default 2181)', apply: (s, v) => void (s.clientPort = port(v)) },
  { key: 'clientPortAddress', flag: 'host', arg: 'address', help: 'address the client port listens on (default 0.0.0.0, every address)', apply: (s, v) => void (s.clientPortAddress = nonEmpty(v)) },
  { key: 'dataDir', flag: 'data-dir', arg: 'dir', help: 'snapshots (and the log, without dataLogDir); absent: in memory', apply: (s, v) => void (s.dataDir = nonEmpty(v)) },
  { key: 'dataLogDir', flag: 'data-log-dir', arg: 'dir', help: 'transaction log directory (default dataDir)', apply: (s, v) => void (s.dataLogDir = nonEmpty(v)) },
  { key: 'tickTime', flag: 'tick-time', arg: 'ms', help: 'the session tick (default 3000)', apply: (s, v) => void (s.tickTime = int(1)(v)) },
  { key: 'minSessionTimeout', flag: 'min-session-timeout', arg: 'ms', help: 'lowest negotiated session timeout (default 2 ticks)', apply: (s, v) => void (s.minSessionTimeout = int(-1)(v)) },
  { key: 'maxSessionTimeout', flag: 'max-session-timeout', arg: 'ms', help: 'highest negotiated session timeout (default 20 ticks)', apply: (s, v) => void (s.maxSessionTimeout = int(-1)(v)) },
  { key: 'maxClientCnxns', flag: 'max-client-cnxns', arg: 'n', help: 'connections per client address, 0 for no limit (default 60)', apply: (s, v) => void (s.maxClientCnxns = int(0)(v)) },
  { key: 'globalOutstandingLimit', flag: 'global-outstanding-limit', arg: 'n', help: 'requests owed before connections stop being read (default 1000)', apply: (s, v) => void (s.globalOutstandingLimit = int(1)(v)) },
  { key: 'snapCount', flag: 'snap-count', arg: 'n', help: 'transactions between snapshots (default 100000)', apply: (s, v) => void (s.snapCount = int(2)(v)) },
  { key: 'preAllocSize', flag: 'pre-alloc-size', arg: 'KiB', help: 'log file preallocation (default 65536)', apply: (s, v) => void (s.preAllocSize = int(1)(v)) },
  { key: 'forceSync', flag: 'force-sync', arg: 'yes|no', help: 'fsync the log before answering a write (default yes)', apply: (s, v) => void (s.forceSync = bool(v)) },
  {
    key: 'autopurge.snapRetainCount',
    flag: 'autopurge-snap-retain-count',
    arg: 'n',
    help: 'snapshots (and their logs) kept by the purge, at least 3 (default 3)',
    apply: (s, v) => void (s.autopurge.snapRetainCount = int(1)(v)),
  },
  {
    key: 'autopurge.purgeInterval',
    flag: 'autopurge-purge-interval',
    arg: 'hours',
    help: 'hours between purges, 0 for none (default 0)',
    apply: (s, v) => void (s.autopurge.purgeIntervalHours = int(0)(v)),
  },
  { key: '4lw.commands.whitelist', flag: '4lw-whitelist', arg: 'words', help: 'four-letter words answered, comma-separated or * (default srvr)', apply: (s, v) => void (s.fourLetterWords = words(v)) },
  { key: 'extendedTypesEnabled', flag: 'extended-types', arg: 'true|false', help: 'TTL nodes (default false)', apply: (s, v) => void (s.extendedTypesEnabled = bool(v)) },
  { key: 'jute.maxbuffer', flag: 'jute-maxbuffer', arg: 'bytes', help: 'largest request; a larger one closes its connection (default 1048575)', apply: (s, v) => void (s.juteMaxBuffer = int(1)(v)) },
  {
    key: 'znode.container.checkIntervalMs',
    arg: 'ms',
    help: 'how often empty containers and expired TTL nodes are reaped (default 60000)',
    apply: (s, v) => void (s.containerCheckIntervalMs = int(1)(v)),
  },
  { key: 'metricsProvider.httpPort', flag: 'metrics-port', arg: 'port', help: 'serve Prometheus text at /metrics on this port (default: off)', apply: (s, v) => void (s.metricsPort = port(v)) },
  { key: 'metricsProvider.httpHost', flag: 'metrics-host', arg: 'address', help: 'address of the metrics port (default 0.0.0.0)', apply: (s, v) => void (s.metricsHost = nonEmpty(v)) },
  {
    key: 'metricsProvider.className',
    arg: 'class',
    help: 'PrometheusMetricsProvider: metrics on metricsProvider.httpPort (default 7000)',
    apply: (s, v) => {
      if (!v.endsWith('PrometheusMetricsProvider')) throw new Error(`${JSON.stringify(v)}: only org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider is served`);
      s.metricsPort ??= 7000;
    },
  },
  { key: 'secureClientPort', flag: 'secure-port', arg: 'port', help: 'TLS client port (not in this build yet)', apply: (s, v) => void (s.secureClientPort = port(v)), unsupported: TLS_MISSING },
  { key: 'secureClientPortAddress', arg: 'address', help: 'address of the TLS port (not in this build yet)', apply: (s, v) => void (s.secureClientPortAddress = nonEmpty(v)), unsupported: TLS_MISSING },
  sslKey('ssl.keyStore.location', 'server key and certificate, PEM or PKCS12 (not in this build yet)'),
  sslKey('ssl.keyStore.password', 'key store password (not in this build yet)'),
  sslKey('ssl.keyStore.type', 'PEM or PKCS12 (not in this build yet)'),
  sslKey('ssl.trustStore.location', 'CA certificates for client certificates (not in this build yet)'),
  sslKey('ssl.trustStore.password', 'trust store password (not in this build yet)'),
  sslKey('ssl.trustStore.type', 'PEM or PKCS12 (not in this build yet)'),
  sslKey('ssl.clientAuth', 'none, want or need (not in this build yet)'),
  { key: 'sasl.usersFile', arg: 'file', help: 'SASL DIGEST-MD5 users, `user=password` lines (not in this build yet)', apply: (s, v) => void (s.saslUsersFile = nonEmpty(v)), unsupported: SASL_MISSING },
  { key: 'webSocketPort', flag: 'ws-port', arg: 'port', help: 'WebSocket client port (not in this build yet)', apply: (s, v) => void (s.webSocketPort = port(v)), unsupported: WS_MISSING },
  { key: 'webSocketPath', arg: 'path', help: 'WebSocket path (not in this build yet)', apply: (s, v) => void (s.webSocketPath = nonEmpty(v)), unsupported: WS_MISSING },
];

const BY_KEY = new Map(KEYS.map((k) => [k.key, k]));
export const BY_FLAG = new Map(KEYS.filter((k) => k.flag !== undefined).map((k) => [k.flag!, k]));

/** Keys of a ZooKeeper ensemble. */
const ENSEMBLE = /^(server\.\d+|group\.\d+|weight\.\d+|initLimit|syncLimit|electionAlg|electionPort|peerType|dynamicConfigFile|leaderServes|quorumListenOnAllIPs)$/;
/** ZooKeeper keys read and deliberately not served here: a warning, not an error. */
const IGNORED = /^(admin\..*|standaloneEnabled|reconfigEnabled|metricsProvider\.exportJvmInfo|authProvider\.\d+|skipACL|audit\.enable|maxCnxns)$/;

/** Where a value came from, for messages: `zoo.cfg:12` or `--port`. */
export type Origin = { file: string; line: number } | { flag: string };
const where = (o: Origin): string => ('flag' in o ? `--${o.flag}` : `${o.file}:${o.line}`);

/** Applies one value. Returns a warning for a key that is not applied, throws ConfigError for a bad one. */
export function applyKey(s: ServerSettings, key: string, value: string, origin: Origin): string | undefined {
  if (ENSEMBLE.test(key)) {
    throw new ConfigError(
      `${where(origin)}: ${key} is an ensemble setting; tenure-server is a standalone server. Remove it, or move to a ZooKeeper ensemble (the data dir moves with you: see the README).`,
      key,
    );
  }
  const def = BY_KEY.get(key);
  if (def === undefined) {
    if (IGNORED.test(key)) return `${where(origin)}: ${key} is not served by tenure-server; ignored`;
    return `${where(origin)}: unknown key ${key}; ignored`;
  }
  try {
    def.apply(s, value);
  } catch (err) {
    throw new ConfigError(`${where(origin)}: bad value for ${key}: ${(err as Error).message}`, key);
  }
  return undefined;
}

/** The settings a file's entries give, with what was warned. */
export function settingsFrom(
  file: { path: string; entries: readonly PropertyEntry[] } | undefined,
  flags: ReadonlyArray<{ key: string; value: string; flag: string }>,
  overrides: Partial<Pick<ServerSettings, 'logLevel'>> = {},
): { settings: ServerSettings; warnings: string[] } {
  const s = defaultSettings();
  const warnings: string[] = [];
  for (const e of file?.entries ?? []) {
    const w = applyKey(s, e.key, e.value, { file: file!.path, line: e.line });
    if (w !== undefined) warnings.push(w);
  }
  for (const f of flags) {
    const w = applyKey(s, f.key, f.value, { flag: f.flag });
    if (w !== undefined) warnings.push(w);
  }
  Object.assign(s, overrides);
  warnings.push(...check(s, [...(file?.entries ?? []).map((e) => e.key), ...flags.map((f) => f.key)]));
  return { settings: s, warnings };
}

/** Cross-key rules, as ZooKeeper's QuorumPeerConfig / ZooKeeperServer apply them. */
function check(s: ServerSettings, given: readonly string[]): string[] {
  const warnings: string[] = [];
  const min = s.minSessionTimeout === -1 ? 2 * s.tickTime : s.minSessionTimeout;
  const max = s.maxSessionTimeout === -1 ? 20 * s.tickTime : s.maxSessionTimeout;
  if (min > max) throw new ConfigError(`minSessionTimeout (${min}) must not be larger than maxSessionTimeout (${max})`, 'minSessionTimeout');
  if (s.dataLogDir !== undefined && s.dataDir === undefined) throw new ConfigError('dataLogDir is set without dataDir: set dataDir too (or neither, to run in memory)', 'dataLogDir');
  if (s.autopurge.snapRetainCount < 3) {
    // ZooKeeper's DatadirCleanupManager raises it to 3 the same way.
    warnings.push(`autopurge.snapRetainCount ${s.autopurge.snapRetainCount} is below the minimum; using 3`);
    s.autopurge.snapRetainCount = 3;
  }
  for (const key of new Set(given)) {
    const def = BY_KEY.get(key);
    if (def?.unsupported !== undefined) throw new ConfigError(`${key}: ${def.unsupported}`, key);
  }
  return warnings;
}

/** The resolved session timeout range. */
export function sessionTimeouts(s: ServerSettings): { minSessionTimeoutMs: number; maxSessionTimeoutMs: number } {
  return {
    minSessionTimeoutMs: s.minSessionTimeout === -1 ? 2 * s.tickTime : s.minSessionTimeout,
    maxSessionTimeoutMs: s.maxSessionTimeout === -1 ? 20 * s.tickTime : s.maxSessionTimeout,
  };
}
