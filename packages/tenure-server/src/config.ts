/**
 * tenure-server's configuration: ZooKeeper's zoo.cfg keys where they apply, so an existing config
 * works, with command-line flags over them (flags.ts). One table (`KEYS`) holds every key: its
 * parser, default, flag and help line; `--help` and the README are written from it.
 *
 * - An unknown key is a warning (ZooKeeper passes unknown keys on as system properties).
 * - A bad value is a ConfigError that names the key (and the file and line, or the flag).
 * - Ensemble keys (`server.N`, `initLimit`, `syncLimit`, …) are a ConfigError: this is a
 *   standalone server; a larger deployment moves to a ZooKeeper ensemble.
 * - TLS stores (ssl.keyStore.*, ssl.trustStore.*: tls-stores.ts) and SASL users come from files (a JAAS config's Server section, or a users file: sasl-users.ts),
 *   read by loadSettings (main.ts) into `tls` and `saslUsers`.
 */
import { DEFAULT_MAX_BUFFER, FOUR_LETTER_WORDS as PROTOCOL_FOUR_LETTER_WORDS, TenureError } from '@tenure/protocol';
import type { TlsOptions } from 'node:tls';
import type { PropertyEntry } from './properties.js';

/** A configuration that cannot be served: the message names the key and where it came from. */
export class ConfigError extends TenureError {
  override readonly name = 'ConfigError';
  constructor(
    message = 'invalid configuration',
    /** The zoo.cfg key concerned, when there is one. */
    readonly key?: string,
  ) {
    super('CONFIG', message);
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
  /** etcd.endpoints: the tree, sessions and sequence counters live in etcd (no dataDir). */
  etcdEndpoints: string[] | undefined;
  /** etcd.prefix (default /tenure). */
  etcdPrefix: string;
  /** etcd.tls.ca / .cert / .key: PEM files for TLS to etcd (the CA; a client certificate and key when etcd asks for one). */
  etcdTls: { ca?: string; cert?: string; key?: string };
  /** etcd.compaction.retention: revisions kept by the elected compactor; absent: it is off. */
  etcdCompactionRetention: number | undefined;
  /** etcd.compaction.intervalMs: how often the compactor runs (default 60000). */
  etcdCompactionIntervalMs: number;
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
  /** A TLS client port (ZooKeeper's secureClientPort) beside clientPort. */
  secureClientPort: number | undefined;
  /** Absent: clientPortAddress. */
  secureClientPortAddress: string | undefined;
  /** The `ssl.*` keys as given (tls-stores.ts reads them). */
  ssl: Record<string, string>;
  /** Node's TLS options read from the ssl.* stores (by loadSettings), with secureClientPort. */
  tls: TlsOptions | undefined;
  /** Serve the WebSocket port as wss:// with the same TLS options. */
  webSocketSecure: boolean;
  /** A JAAS login config whose Server section lists the DIGEST-MD5 users (sasl-users.ts). */
  jaasConfig: string | undefined;
  /** `name=password` lines: DIGEST-MD5 users. */
  saslUsersFile: string | undefined;
  /** The users read from jaasConfig and saslUsersFile (by loadSettings); absent: no SASL users. */
  saslUsers: Readonly<Record<string, string>> | undefined;
  /** A WebSocket listener (one ZooKeeper frame per binary message) beside the client port. */
  webSocketPort: number | undefined;
  /** Absent: clientPortAddress. */
  webSocketPortAddress: string | undefined;
  /** Absent: '/zookeeper'. */
  webSocketPath: string | undefined;
  /** Browser origins allowed; absent: every origin. */
  webSocketOrigins: readonly string[] | undefined;
}

/** The four-letter words ZooKeeper 3.8 knows (the wire protocol's own list, in @tenure/protocol). */
export const FOUR_LETTER_WORDS: readonly string[] = [...PROTOCOL_FOUR_LETTER_WORDS];

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
    etcdEndpoints: undefined,
    etcdPrefix: '/tenure',
    etcdTls: {},
    etcdCompactionRetention: undefined,
    etcdCompactionIntervalMs: 60_000,
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
    tls: undefined,
    webSocketSecure: false,
    jaasConfig: undefined,
    saslUsersFile: undefined,
    saslUsers: undefined,
    webSocketPort: undefined,
    webSocketPortAddress: undefined,
    webSocketPath: undefined,
    webSocketOrigins: undefined,
  };
}

// ---- value parsers: each returns the value or throws a bare message, which gets the key added ----

function int(min: number, max = Number.MAX_SAFE_INTEGER): (v: string) => number {
  return (v) => {
    if (!/^-?\d+$/.test(v)) throw new ConfigError(`${JSON.stringify(v)} is not a whole number`);
    const n = Number(v);
    if (n < min || n > max) throw new ConfigError(`${n} is out of range (${min}…${max === Number.MAX_SAFE_INTEGER ? '' : max})`);
    return n;
  };
}
const port = (v: string): number => int(0, 65535)(v);
function bool(v: string): boolean {
  const s = v.toLowerCase();
  if (s === 'yes' || s === 'true') return true;
  if (s === 'no' || s === 'false') return false;
  throw new ConfigError(`${JSON.stringify(v)} is not yes/no or true/false`);
}
function nonEmpty(v: string): string {
  if (v === '') throw new ConfigError('is empty');
  return v;
}
function urlPath(v: string): string {
  if (!v.startsWith('/')) throw new ConfigError(`${JSON.stringify(v)} does not start with /`);
  return v;
}
function origins(v: string): readonly string[] {
  const list = v
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  if (list.length === 0) throw new ConfigError('is empty');
  for (const o of list) {
    let ok = false;
    try {
      ok = new URL(o).origin !== 'null';
    } catch {
      // not a URL
    }
    if (!ok) throw new ConfigError(`${JSON.stringify(o)} is not an origin (scheme://host[:port])`);
  }
  return list;
}
function words(v: string): readonly string[] | '*' {
  const list = v
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w !== '');
  if (list.includes('*')) return '*';
  const bad = list.filter((w) => !FOUR_LETTER_WORDS.includes(w));
  if (bad.length > 0)
    throw new ConfigError(`${bad.map((w) => JSON.stringify(w)).join(', ')} not a four-letter word (${FOUR_LETTER_WORDS.join(', ')}, or *)`);
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
}

const sslKey = (name: string, help: string, check: (v: string) => string = nonEmpty): ConfigKey => ({
  key: name,
  arg: 'value',
  help,
  apply: (s, v) => void (s.ssl[name] = check(v)),
});
function oneOf(...values: string[]): (v: string) => string {
  return (v) => {
    if (!values.includes(v.toLowerCase())) throw new ConfigError(`${JSON.stringify(v)} is not ${values.join(', ')}`);
    return v;
  };
}

const JAAS_HELP = 'a JAAS file: its Server section\'s DigestLoginModule user_<name>="<password>" options are the SASL users';
const ORIGINS_HELP = 'browser origins allowed, comma-separated (default: every origin; clients without an Origin header are always let in)';

/** Every key tenure-server reads, in --help order. */
export const KEYS: readonly ConfigKey[] = [
  { key: 'clientPort', flag: 'port', arg: 'port', help: 'client port (default 2181)', apply: (s, v) => void (s.clientPort = port(v)) },
  {
    key: 'clientPortAddress',
    flag: 'host',
    arg: 'address',
    help: 'address the client port listens on (default 0.0.0.0, every address)',
    apply: (s, v) => void (s.clientPortAddress = nonEmpty(v)),
  },
  {
    key: 'dataDir',
    flag: 'data-dir',
    arg: 'dir',
    help: 'snapshots (and the log, without dataLogDir); absent: in memory',
    apply: (s, v) => void (s.dataDir = nonEmpty(v)),
  },
  {
    key: 'etcd.endpoints',
    flag: 'etcd',
    arg: 'urls',
    help: 'etcd client URLs, comma-separated: the tree, sessions and sequence counters live in etcd (no dataDir); front ends over one etcd and prefix serve one namespace',
    apply: (s, v) =>
      void (s.etcdEndpoints = nonEmpty(v)
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== '')),
  },
  {
    key: 'etcd.prefix',
    flag: 'etcd-prefix',
    arg: 'prefix',
    help: 'the key prefix of the namespace in etcd (default /tenure)',
    apply: (s, v) => void (s.etcdPrefix = nonEmpty(v)),
  },
  {
    key: 'etcd.tls.ca',
    flag: 'etcd-tls-ca',
    arg: 'file',
    help: "PEM CA bundle that signs etcd's certificates: TLS to etcd (https:// endpoints imply TLS)",
    apply: (s, v) => void (s.etcdTls.ca = nonEmpty(v)),
  },
  {
    key: 'etcd.tls.cert',
    flag: 'etcd-tls-cert',
    arg: 'file',
    help: 'PEM client certificate for etcd (--client-cert-auth); with etcd.tls.key',
    apply: (s, v) => void (s.etcdTls.cert = nonEmpty(v)),
  },
  {
    key: 'etcd.tls.key',
    flag: 'etcd-tls-key',
    arg: 'file',
    help: 'PEM key of etcd.tls.cert',
    apply: (s, v) => void (s.etcdTls.key = nonEmpty(v)),
  },
  {
    key: 'etcd.compaction.retention',
    flag: 'etcd-compaction-retention',
    arg: 'revisions',
    help: 'compact etcd, keeping this many revisions, from one elected front end (default: off; run etcd with --auto-compaction-* instead)',
    apply: (s, v) => void (s.etcdCompactionRetention = int(1)(v)),
  },
  {
    key: 'etcd.compaction.intervalMs',
    arg: 'ms',
    help: 'how often the elected front end compacts (default 60000)',
    apply: (s, v) => void (s.etcdCompactionIntervalMs = int(100)(v)),
  },
  {
    key: 'dataLogDir',
    flag: 'data-log-dir',
    arg: 'dir',
    help: 'transaction log directory (default dataDir)',
    apply: (s, v) => void (s.dataLogDir = nonEmpty(v)),
  },
  {
    key: 'tickTime',
    flag: 'tick-time',
    arg: 'ms',
    help: 'the session tick (default 3000)',
    apply: (s, v) => void (s.tickTime = int(1)(v)),
  },
  {
    key: 'minSessionTimeout',
    flag: 'min-session-timeout',
    arg: 'ms',
    help: 'lowest negotiated session timeout (default 2 ticks)',
    apply: (s, v) => void (s.minSessionTimeout = int(-1)(v)),
  },
  {
    key: 'maxSessionTimeout',
    flag: 'max-session-timeout',
    arg: 'ms',
    help: 'highest negotiated session timeout (default 20 ticks)',
    apply: (s, v) => void (s.maxSessionTimeout = int(-1)(v)),
  },
  {
    key: 'maxClientCnxns',
    flag: 'max-client-cnxns',
    arg: 'n',
    help: 'connections per client address, 0 for no limit (default 60)',
    apply: (s, v) => void (s.maxClientCnxns = int(0)(v)),
  },
  {
    key: 'globalOutstandingLimit',
    flag: 'global-outstanding-limit',
    arg: 'n',
    help: 'requests owed before connections stop being read (default 1000)',
    apply: (s, v) => void (s.globalOutstandingLimit = int(1)(v)),
  },
  {
    key: 'snapCount',
    flag: 'snap-count',
    arg: 'n',
    help: 'transactions between snapshots (default 100000)',
    apply: (s, v) => void (s.snapCount = int(2)(v)),
  },
  {
    key: 'preAllocSize',
    flag: 'pre-alloc-size',
    arg: 'KiB',
    help: 'log file preallocation (default 65536)',
    apply: (s, v) => void (s.preAllocSize = int(1)(v)),
  },
  {
    key: 'forceSync',
    flag: 'force-sync',
    arg: 'yes|no',
    help: 'fsync the log before answering a write (default yes)',
    apply: (s, v) => void (s.forceSync = bool(v)),
  },
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
  {
    key: '4lw.commands.whitelist',
    flag: '4lw-whitelist',
    arg: 'words',
    help: 'four-letter words answered, comma-separated or * (default srvr)',
    apply: (s, v) => void (s.fourLetterWords = words(v)),
  },
  {
    key: 'extendedTypesEnabled',
    flag: 'extended-types',
    arg: 'true|false',
    help: 'TTL nodes (default false)',
    apply: (s, v) => void (s.extendedTypesEnabled = bool(v)),
  },
  {
    key: 'jute.maxbuffer',
    flag: 'jute-maxbuffer',
    arg: 'bytes',
    help: 'largest request; a larger one closes its connection (default 1048575)',
    apply: (s, v) => void (s.juteMaxBuffer = int(1)(v)),
  },
  {
    key: 'znode.container.checkIntervalMs',
    arg: 'ms',
    help: 'how often empty containers and expired TTL nodes are reaped (default 60000)',
    apply: (s, v) => void (s.containerCheckIntervalMs = int(1)(v)),
  },
  {
    key: 'metricsProvider.httpPort',
    flag: 'metrics-port',
    arg: 'port',
    help: 'serve Prometheus text at /metrics on this port (default: off)',
    apply: (s, v) => void (s.metricsPort = port(v)),
  },
  {
    key: 'metricsProvider.httpHost',
    flag: 'metrics-host',
    arg: 'address',
    help: 'address of the metrics port (default 0.0.0.0)',
    apply: (s, v) => void (s.metricsHost = nonEmpty(v)),
  },
  {
    key: 'metricsProvider.className',
    arg: 'class',
    help: 'PrometheusMetricsProvider: metrics on metricsProvider.httpPort (default 7000)',
    apply: (s, v) => {
      if (!v.endsWith('PrometheusMetricsProvider'))
        throw new ConfigError(`${JSON.stringify(v)}: only org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider is served`);
      s.metricsPort ??= 7000;
    },
  },
  {
    key: 'secureClientPort',
    flag: 'secure-port',
    arg: 'port',
    help: 'a TLS client port beside clientPort (default: off)',
    apply: (s, v) => void (s.secureClientPort = port(v)),
  },
  {
    key: 'secureClientPortAddress',
    flag: 'secure-host',
    arg: 'address',
    help: 'address of the TLS port (default clientPortAddress)',
    apply: (s, v) => void (s.secureClientPortAddress = nonEmpty(v)),
  },
  sslKey('ssl.keyStore.location', 'server key and certificate chain: one PEM file, or PKCS12'),
  sslKey('ssl.keyStore.password', 'PKCS12 password, or the PEM key passphrase'),
  sslKey('ssl.keyStore.type', 'PEM or PKCS12 (default: from the file name)', oneOf('pem', 'pkcs12', 'jks', 'bcfks')),
  sslKey('ssl.trustStore.location', 'CA certificates (PEM) client certificates must chain to'),
  sslKey('ssl.trustStore.password', 'trust store password (unused for PEM)'),
  sslKey('ssl.trustStore.type', 'PEM (default: from the file name)', oneOf('pem', 'pkcs12', 'jks', 'bcfks')),
  sslKey('ssl.clientAuth', 'need (default), want or none: client certificates', oneOf('need', 'want', 'none')),
  {
    key: 'java.security.auth.login.config',
    flag: 'jaas-config',
    arg: 'file',
    help: JAAS_HELP,
    apply: (s, v) => void (s.jaasConfig = nonEmpty(v)),
  },
  {
    key: 'sasl.usersFile',
    flag: 'sasl-users-file',
    arg: 'file',
    help: 'SASL DIGEST-MD5 users, one name=password line each',
    apply: (s, v) => void (s.saslUsersFile = nonEmpty(v)),
  },
  {
    key: 'webSocketPort',
    flag: 'ws-port',
    arg: 'port',
    help: 'a WebSocket client port beside clientPort (default: off)',
    apply: (s, v) => void (s.webSocketPort = port(v)),
  },
  {
    key: 'webSocketPortAddress',
    flag: 'ws-host',
    arg: 'address',
    help: 'address of the WebSocket port (default clientPortAddress)',
    apply: (s, v) => void (s.webSocketPortAddress = nonEmpty(v)),
  },
  {
    key: 'webSocketPath',
    flag: 'ws-path',
    arg: 'path',
    help: 'the path upgraded to WebSocket (default /zookeeper)',
    apply: (s, v) => void (s.webSocketPath = urlPath(v)),
  },
  {
    key: 'webSocketOrigins',
    flag: 'ws-origins',
    arg: 'origins',
    help: ORIGINS_HELP,
    apply: (s, v) => void (s.webSocketOrigins = origins(v)),
  },
  {
    key: 'webSocketSecure',
    flag: 'ws-secure',
    arg: 'true|false',
    help: 'serve the WebSocket port as wss:// with the ssl.* stores (default false)',
    apply: (s, v) => void (s.webSocketSecure = bool(v)),
  },
];

const BY_KEY = new Map(KEYS.map((k) => [k.key, k]));
export const BY_FLAG = new Map(KEYS.filter((k) => k.flag !== undefined).map((k) => [k.flag!, k]));

/** Keys of a ZooKeeper ensemble. */
const ENSEMBLE =
  /^(server\.\d+|group\.\d+|weight\.\d+|initLimit|syncLimit|electionAlg|electionPort|peerType|dynamicConfigFile|leaderServes|quorumListenOnAllIPs)$/;
/** ZooKeeper keys read and deliberately not served here: a warning, not an error. */
const IGNORED =
  /^(admin\..*|standaloneEnabled|reconfigEnabled|metricsProvider\.exportJvmInfo|authProvider\..+|skipACL|audit\.enable|maxCnxns)$/;
/** Auth providers tenure-server always has: naming them (as a ZooKeeper SASL or TLS config does) is no warning. */
const BUILT_IN_PROVIDER = /(SASLAuthenticationProvider|X509AuthenticationProvider|DigestAuthenticationProvider)$/;
/** ZooKeeper's connection factories: TLS needs Netty there; every listener here is built in. */
const CNXN_FACTORY = /(NettyServerCnxnFactory|NIOServerCnxnFactory)$/;

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
    if (/^authProvider\..+$/.test(key) && BUILT_IN_PROVIDER.test(value)) return undefined;
    if (key === 'serverCnxnFactory' && CNXN_FACTORY.test(value)) return undefined;
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
  if (min > max)
    throw new ConfigError(`minSessionTimeout (${min}) must not be larger than maxSessionTimeout (${max})`, 'minSessionTimeout');
  if (s.webSocketPort !== undefined && s.webSocketPort !== 0 && s.webSocketPort === s.clientPort)
    throw new ConfigError(`webSocketPort ${s.webSocketPort} is the clientPort too: give it a port of its own`, 'webSocketPort');
  if (s.etcdEndpoints !== undefined && s.dataDir !== undefined)
    throw new ConfigError('etcd.endpoints and dataDir are both set: with etcd the tree lives there, not in a data dir', 'etcd.endpoints');
  if (s.etcdEndpoints === undefined && given.some((k) => k.startsWith('etcd.')))
    warnings.push('etcd.* keys are set without etcd.endpoints: they are not used');
  if ((s.etcdTls.cert === undefined) !== (s.etcdTls.key === undefined))
    throw new ConfigError('etcd.tls.cert and etcd.tls.key go together: set both or neither', 'etcd.tls.cert');
  if (s.dataLogDir !== undefined && s.dataDir === undefined)
    throw new ConfigError('dataLogDir is set without dataDir: set dataDir too (or neither, to run in memory)', 'dataLogDir');
  if (s.autopurge.snapRetainCount < 3) {
    // ZooKeeper's DatadirCleanupManager raises it to 3 the same way.
    warnings.push(`autopurge.snapRetainCount ${s.autopurge.snapRetainCount} is below the minimum; using 3`);
    s.autopurge.snapRetainCount = 3;
  }
  if (
    s.secureClientPort !== undefined &&
    s.secureClientPort !== 0 &&
    (s.secureClientPort === s.clientPort || s.secureClientPort === s.webSocketPort)
  ) {
    throw new ConfigError(
      `secureClientPort ${s.secureClientPort} is another listener's port too: give it a port of its own`,
      'secureClientPort',
    );
  }
  if (s.webSocketSecure && s.webSocketPort === undefined)
    throw new ConfigError('webSocketSecure is set without webSocketPort', 'webSocketSecure');
  const secure = s.secureClientPort !== undefined || s.webSocketSecure;
  if (!secure && given.some((k) => k.startsWith('ssl.')))
    warnings.push('ssl.* keys are set without secureClientPort (or webSocketSecure): no TLS port is served');
  return warnings;
}

/** The resolved session timeout range. */
export function sessionTimeouts(s: ServerSettings): { minSessionTimeoutMs: number; maxSessionTimeoutMs: number } {
  return {
    minSessionTimeoutMs: s.minSessionTimeout === -1 ? 2 * s.tickTime : s.minSessionTimeout,
    maxSessionTimeoutMs: s.maxSessionTimeout === -1 ? 20 * s.tickTime : s.maxSessionTimeout,
  };
}
