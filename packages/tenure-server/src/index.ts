/**
 * @tenure/tenure-server: the embedded server of @tenure/server as a standalone process that reads
 * ZooKeeper's zoo.cfg, logs JSON lines (pino) and serves Prometheus metrics (prom-client).
 * Importing this module runs nothing: the `tenure-server` bin runs main(); a program can start the
 * same server with loadSettings() and startServer().
 */
export { main, loadSettings, startServer, serverOptions, storageOptions, version, type RunningServer } from './main.js';
export {
  ConfigError,
  KEYS,
  LOG_LEVELS,
  FOUR_LETTER_WORDS,
  defaultSettings,
  settingsFrom,
  sessionTimeouts,
  type ConfigKey,
  type LogLevel,
  type ServerSettings,
} from './config.js';
export { helpText, parseCommandLine, type CommandLine } from './flags.js';
export { ServerMetrics, serveMetrics } from './metrics.js';
export { parseProperties, type PropertyEntry } from './properties.js';
export { jaasServerUsers, parseJaas, readSaslUsers, usersFileUsers } from './sasl-users.js';
export { splitPem, tlsServerOptions } from './tls-stores.js';
