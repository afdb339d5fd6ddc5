/**
 * The interactive shell (`tenure --server …` alone), as zkCli's: a prompt, every command of the
 * CLI on one session, history (kept in $TENURE_HISTORY, default ~/.tenure_history) and tab
 * completion of command names and node paths (the children of the path typed so far).
 * A command's error is printed in one line and the shell goes on; Ctrl-C stops a running command
 * (watch), or leaves the shell when none runs; so do `quit`, `exit` and end of input.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Client } from '@tenure/client';
import { childPath, sessionHex } from '../inspect/index.js';
import { COMMANDS, findCommand } from './commands.js';
import type { GlobalOptions } from './global-options.js';
import { helpText } from './help-text.js';
import { createOutput } from './output.js';
import { parseCommand, runParsed } from './run-command.js';
import { splitWords } from './shell-words.js';
import { describeError } from './usage-error.js';

export interface ShellIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

const SHELL_WORDS = ['help', 'quit', 'exit', 'history'];
const HISTORY_SIZE = 1000;

function historyFile(env: NodeJS.ProcessEnv): string | null {
  if (env.TENURE_HISTORY === '') return null;
  return env.TENURE_HISTORY ?? join(homedir(), '.tenure_history');
}

function loadHistory(file: string | null): string[] {
  if (file === null) return [];
  try {
    // readline wants the newest first.
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-HISTORY_SIZE).reverse();
  } catch {
    return [];
  }
}

/** Candidates for the word being typed: a command name first, then node paths. */
export async function completeLine(client: Client, line: string): Promise<[string[], string]> {
  const words = line.split(/\s+/);
  const current = words[words.length - 1] ?? '';
  if (words.length <= 1) {
    const names = [...COMMANDS.map((c) => c.name), ...SHELL_WORDS].filter((n) => n.startsWith(current)).sort();
    return [names, current];
  }
  if (!current.startsWith('/')) return [[], current];
  const slash = current.lastIndexOf('/');
  const parent = slash === 0 ? '/' : current.slice(0, slash);
  const prefix = current.slice(slash + 1);
  try {
    const { children } = await client.getChildren(parent);
    return [
      children
        .filter((c) => c.startsWith(prefix))
        .sort()
        .map((c) => childPath(parent, c)),
      current,
    ];
  } catch {
    return [[], current];
  }
}

/** Runs the shell until quit, Ctrl-C or end of input. Resolves with the exit code (0). */
export async function runShell(client: Client, options: GlobalOptions, io: ShellIo): Promise<number> {
  const file = historyFile(io.env);
  const completer = (line: string, callback: (err: null, result: [string[], string]) => void): void => {
    completeLine(client, line).then(
      (r) => callback(null, r),
      () => callback(null, [[], line]),
    );
  };
  const rl = createInterface({
    input: io.stdin,
    output: io.stdout,
    completer,
    terminal: io.stdin.isTTY === true,
    history: loadHistory(file),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    prompt: `[tenure: ${options.server}] `,
  });
  let running: AbortController | null = null;
  let closed = false;
  rl.on('SIGINT', () => {
    if (running !== null) running.abort();
    else rl.close();
  });
  rl.on('close', () => {
    closed = true;
    running?.abort();
  });
  const session: string[] = [];
  // Piped input gets no prompts, so that its output is the commands' output alone.
  const prompt = (): void => {
    if (io.stdin.isTTY === true && !closed) rl.prompt();
  };
  io.stderr.write(
    `Connected to ${client.connectedServer ?? options.server} (session ${sessionHex(client.sessionId)}). Type help, or quit.\n`,
  );
  prompt();
  for await (const line of rl) {
    const trimmed = line.trim();
    if (trimmed !== '') {
      session.push(trimmed);
      if (file !== null) {
        try {
          appendFileSync(file, `${trimmed}\n`, { mode: 0o600 });
        } catch {
          // A history that cannot be written is no reason to stop.
        }
      }
      const stop = await runLine(client, options, io, trimmed, session, (c) => (running = c));
      running = null;
      if (stop) break;
    }
    prompt();
  }
  rl.close();
  return 0;
}

/** One line of the shell; resolves true when the shell should end. */
async function runLine(
  client: Client,
  options: GlobalOptions,
  io: ShellIo,
  line: string,
  session: readonly string[],
  setRunning: (c: AbortController) => void,
): Promise<boolean> {
  try {
    let words = splitWords(line);
    if (words.length === 0) return false;
    const json = options.json || words.includes('--json');
    words = words.filter((w) => w !== '--json');
    const [name] = words;
    if (name === 'quit' || name === 'exit') return true;
    if (name === 'history') {
      session.forEach((l, i) => io.stdout.write(`${String(i + 1).padStart(4)}  ${l}\n`));
      return false;
    }
    if (name === 'help' || name === undefined) {
      io.stdout.write(helpText(words[1]));
      return false;
    }
    if (words.some((w) => /^--(server|auth|tls-ca|tls-cert|tls-key|sasl|timeout)(=|$)/.test(w))) {
      io.stderr.write('tenure: connection options are given when the shell starts\n');
      return false;
    }
    if (!findCommand(name)) {
      io.stderr.write(`tenure: unknown command ${JSON.stringify(name)} (help lists them)\n`);
      return false;
    }
    const cmd = parseCommand(words);
    const controller = new AbortController();
    setRunning(controller);
    await runParsed(
      {
        client,
        options: { ...options, json },
        out: createOutput(io.stdout, io.stderr, json),
        signal: controller.signal,
        interactive: true,
      },
      cmd,
    );
  } catch (err) {
    io.stderr.write(`tenure: ${describeError(err).message}\n`);
  }
  return false;
}
