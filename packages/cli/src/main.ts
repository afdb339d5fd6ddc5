/**
 * The `tenure` command's entry: argv in, exit code out (0 ok, 1 a ZooKeeper error or no
 * connection, 2 bad usage). Errors are one line on stderr; stdout holds only the command's output.
 */
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { TenureError, type Client } from '@tenure/client';
import { checkConnectionOptions, connect } from './cli/connection.js';
import { takeGlobalOptions, type GlobalOptions } from './cli/global-options.js';
import { helpText } from './cli/help-text.js';
import { createOutput, jsonText } from './cli/output.js';
import { parseCommand, runParsed, type ParsedCommand } from './cli/run-command.js';
import { runShell } from './cli/shell.js';
import { describeError, EXIT_OK } from './cli/usage-error.js';

export interface MainIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  /** Aborts long-running commands (watch) and the shell's running command; default: on SIGINT. */
  signal?: AbortSignal;
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Runs `tenure` with `argv` (without node and the script). */
export async function main(
  argv: readonly string[],
  io: MainIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  // With --json, stdout holds one JSON document even when the command fails: the error's.
  const json = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length).includes('--json');
  let started = false;
  const fail = (err: unknown): number => {
    const { code, message, name } = describeError(err);
    io.stderr.write(`tenure: ${message}\n`);
    if (json && !started)
      io.stdout.write(`${jsonText({ error: { name, ...(err instanceof TenureError && { code: err.code }), message, exitCode: code } })}\n`);
    return code;
  };
  let options: GlobalOptions;
  let words: string[];
  let command: ParsedCommand | null = null;
  try {
    ({ options, rest: words } = takeGlobalOptions(argv, io.env));
    if (words[0] === '--') words = words.slice(1);
    if (options.version) {
      io.stdout.write(`tenure ${version()}\n`);
      return EXIT_OK;
    }
    if (words[0] === 'help' || options.help) {
      io.stdout.write(helpText(words[0] === 'help' ? words[1] : words[0]));
      return EXIT_OK;
    }
    // Usage is checked before connecting: a typo needs no server.
    if (words.length > 0) command = parseCommand(words);
    checkConnectionOptions(options);
  } catch (err) {
    return fail(err);
  }

  const controller = new AbortController();
  const onSigint = (): void => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  io.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  if (io.signal === undefined && command !== null) process.on('SIGINT', onSigint);
  let client: Client | null = null;
  try {
    client = await connect(options);
    if (command === null) return await runShell(client, options, io);
    const out = createOutput(io.stdout, io.stderr, options.json);
    // Once a command has started printing its document, an error must not add a second one.
    const tracking = {
      ...out,
      document: (v: unknown) => ((started = true), out.document(v)),
      raw: (t: string) => ((started = true), out.raw(t)),
    };
    await runParsed({ client, options, out: tracking, signal: controller.signal, interactive: false }, command);
    return EXIT_OK;
  } catch (err) {
    return fail(err);
  } finally {
    process.off('SIGINT', onSigint);
    await client?.close().catch(() => {});
  }
}
