/** `tenure help` and `tenure help COMMAND`. */
import type { CommandSpec } from './command-spec.js';
import { COMMANDS, findCommand } from './commands.js';
import { UsageError } from './usage-error.js';

export const GLOBAL_OPTIONS_HELP = `Connection and output options (before or after the command):
  --server host:2181[,host2:2181][/chroot]   where to connect (default $TENURE_SERVER, else 127.0.0.1:2181)
  --auth scheme:credentials                  add auth, e.g. --auth digest:user:password (repeatable)
  --tls-ca FILE --tls-cert FILE --tls-key FILE   TLS: trust this CA (PEM); with --tls-cert and --tls-key,
                                             a client certificate (x509 auth; both or neither)
  --sasl user:password                       SASL DIGEST-MD5 (the server's JAAS user)
  --timeout MS                               how long to wait for a connection (default 10000)
  --json                                     print exactly one JSON document on stdout`;

export function helpText(command?: string): string {
  if (command !== undefined) {
    const spec = findCommand(command);
    if (!spec) throw new UsageError(`unknown command ${JSON.stringify(command)} (tenure help lists them)`);
    return `usage: tenure ${spec.synopsis}\n  ${spec.summary}\n${spec.example ? `example: ${spec.example}\n` : ''}`;
  }
  const width = Math.max(...COMMANDS.map((c) => c.synopsis.length));
  const lines = COMMANDS.map((c: CommandSpec) => `  ${c.synopsis.padEnd(width)}  ${c.summary}`);
  return (
    'usage: tenure [options] COMMAND [ARGS]   (tenure [options] alone opens the shell)\n\n' +
    `Commands:\n${lines.join('\n')}\n  help [COMMAND]\n\n${GLOBAL_OPTIONS_HELP}\n\n` +
    'Exit codes: 0 ok, 1 ZooKeeper error (NoNode, NoAuth, ..., or no connection), 2 bad usage.\n'
  );
}
