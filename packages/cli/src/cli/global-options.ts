/**
 * The options every command takes, before or after the command's name: where to connect and how
 * (`--server`, `--auth`, `--tls-*`, `--sasl`, `--timeout`) and how to print (`--json`). They are
 * taken out of argv first; what is left is the command and its own arguments.
 */
import { UsageError } from './usage-error.js';

export interface GlobalOptions {
  /** `host:2181[,host2:2181][/chroot]`. Default `$TENURE_SERVER`, else 127.0.0.1:2181. */
  server: string;
  /** `--auth scheme:credentials`, repeatable (e.g. `digest:user:password`). */
  auth: { scheme: string; auth: string }[];
  tlsCa: string | undefined;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** `--sasl user:password` (DIGEST-MD5). */
  sasl: { username: string; password: string } | undefined;
  /** How long to wait for a connection, ms. Default 10,000. */
  timeoutMs: number;
  json: boolean;
  help: boolean;
  version: boolean;
}

const WITH_VALUE = new Set(['--server', '--auth', '--tls-ca', '--tls-cert', '--tls-key', '--sasl', '--timeout']);
const FLAGS = new Set(['--json', '--help', '-h', '--version']);

/** The global options, and argv without them (`--` and everything after it is left alone). */
export function takeGlobalOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { options: GlobalOptions; rest: string[] } {
  const options: GlobalOptions = {
    server: env.TENURE_SERVER || '127.0.0.1:2181',
    auth: [],
    tlsCa: undefined,
    tlsCert: undefined,
    tlsKey: undefined,
    sasl: undefined,
    timeoutMs: 10_000,
    json: false,
    help: false,
    version: false,
  };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (FLAGS.has(name) && eq < 0) {
      if (name === '--json') options.json = true;
      else if (name === '--version') options.version = true;
      else options.help = true;
      continue;
    }
    if (!WITH_VALUE.has(name)) {
      rest.push(arg);
      continue;
    }
    let value: string;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new UsageError(`${name} needs a value`);
      value = next;
      i++;
    }
    apply(options, name, value);
  }
  return { options, rest };
}

function apply(o: GlobalOptions, name: string, value: string): void {
  switch (name) {
    case '--server':
      if (!/^[^/\s]+(\/.*)?$/.test(value))
        throw new UsageError(`--server: expected host:port[,host:port][/chroot], got ${JSON.stringify(value)}`);
      o.server = value;
      return;
    case '--auth': {
      const colon = value.indexOf(':');
      if (colon <= 0) throw new UsageError(`--auth: expected scheme:credentials (e.g. digest:user:password), got ${JSON.stringify(value)}`);
      o.auth.push({ scheme: value.slice(0, colon), auth: value.slice(colon + 1) });
      return;
    }
    case '--sasl': {
      const colon = value.indexOf(':');
      if (colon <= 0) throw new UsageError('--sasl: expected user:password');
      o.sasl = { username: value.slice(0, colon), password: value.slice(colon + 1) };
      return;
    }
    case '--timeout': {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--timeout: expected a positive number of ms, got ${JSON.stringify(value)}`);
      o.timeoutMs = n;
      return;
    }
    case '--tls-ca':
      o.tlsCa = value;
      return;
    case '--tls-cert':
      o.tlsCert = value;
      return;
    case '--tls-key':
      o.tlsKey = value;
      return;
  }
}
