/**
 * tenure-server's command line: `--name value` or `--name=value`. Every zoo.cfg key with a flag in
 * config.ts's table is a flag here, and a flag wins over the file; `--config`, `--log-level`,
 * `--help` and `--version` are the process's own. `--help` is written from the same table.
 */
import { BY_FLAG, ConfigError, KEYS, LOG_LEVELS, type LogLevel } from './config.js';

/** What the command line asked for. */
export interface CommandLine {
  config: string | undefined;
  logLevel: LogLevel | undefined;
  help: boolean;
  version: boolean;
  /** Key values from flags, in order. */
  values: Array<{ key: string; value: string; flag: string }>;
}

const OWN = ['config', 'log-level', 'help', 'version'];

export function parseCommandLine(argv: readonly string[]): CommandLine {
  const out: CommandLine = { config: undefined, logLevel: undefined, help: false, version: false, values: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      out.help = true;
      continue;
    }
    if (arg === '--version') {
      out.version = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      // ZooKeeper's zkServer.sh passes the config file as a bare argument.
      if (out.config === undefined && !arg.startsWith('-')) {
        out.config = arg;
        continue;
      }
      throw new ConfigError(`unexpected argument ${JSON.stringify(arg)} (see --help)`);
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!OWN.includes(name) && !BY_FLAG.has(name)) throw new ConfigError(`unknown flag --${name} (see --help)`);
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new ConfigError(`--${name} needs a value`);
      value = next;
      i++;
    }
    if (name === 'config') out.config = value;
    else if (name === 'log-level') {
      if (!(LOG_LEVELS as readonly string[]).includes(value))
        throw new ConfigError(`--log-level: ${JSON.stringify(value)} is not one of ${LOG_LEVELS.join(', ')}`);
      out.logLevel = value as LogLevel;
    } else out.values.push({ key: BY_FLAG.get(name)!.key, value, flag: name });
  }
  return out;
}

/** The --help text: every flag, then the zoo.cfg keys that have none. */
export function helpText(): string {
  const rows: Array<[string, string]> = [
    ['--config <zoo.cfg>', 'a ZooKeeper config file (flags override its keys)'],
    ...KEYS.filter((k) => k.flag !== undefined).map((k): [string, string] => [`--${k.flag} <${k.arg}>`, `${k.help}  [${k.key}]`]),
    [`--log-level <level>`, `${LOG_LEVELS.join('|')} (default info); JSON lines on stdout`],
    ['--help', 'this text'],
    ['--version', 'the version'],
  ];
  const width = Math.max(...rows.map((r) => r[0].length)) + 2;
  const keysOnly = KEYS.filter((k) => k.flag === undefined);
  return (
    'Usage: tenure-server [--config zoo.cfg] [flags]\n\n' +
    "A standalone server with ZooKeeper 3.8's protocol and semantics. Without a data dir it runs in memory.\n\n" +
    'Flags:\n' +
    rows.map(([f, h]) => `  ${f.padEnd(width)}${h}`).join('\n') +
    '\n\nzoo.cfg keys without a flag:\n' +
    keysOnly.map((k) => `  ${k.key.padEnd(width)}${k.help}`).join('\n') +
    '\n\nAn unknown key is a warning; a bad value is an error naming the key; ensemble keys (server.N, initLimit, syncLimit) are an error.\n' +
    'Signals: SIGTERM and SIGINT stop accepting, answer what is in flight, sync and exit 0.\n'
  );
}
