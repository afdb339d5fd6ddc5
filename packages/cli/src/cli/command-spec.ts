/**
 * What a command is: its name, synopsis, options (node:util parseArgs' config), how many
 * positionals it takes, which of them are paths (the shell completes those), and what it does.
 */
import type { ParseArgsConfig } from 'node:util';
import type { Client } from '@tenure/client';
import type { GlobalOptions } from './global-options.js';
import type { Output } from './output.js';

export type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface CommandInput {
  /** The positionals. */
  readonly args: readonly string[];
  /** The command's own options, by long name. */
  readonly flags: FlagValues;
}

export interface CommandContext {
  /** A started client. */
  readonly client: Client;
  readonly out: Output;
  /** The global options (the connect string, auth, TLS files, --json). */
  readonly options: GlobalOptions;
  /** Aborts on Ctrl-C (SIGINT): long-running commands (watch, ui) end when it does. */
  readonly signal: AbortSignal;
  /** True inside the interactive shell. */
  readonly interactive: boolean;
}

export interface CommandSpec {
  readonly name: string;
  /** `ls [-R] PATH`. */
  readonly synopsis: string;
  /** One line for `help`. */
  readonly summary: string;
  /** An example for `help COMMAND`. */
  readonly example?: string;
  readonly options?: NonNullable<ParseArgsConfig['options']>;
  /** Positionals: at least `min`, at most `max`. */
  readonly args: { readonly min: number; readonly max: number };
  /** Indexes of positionals that are node paths (completed by the shell). Default [0] when max > 0. */
  readonly pathArgs?: readonly number[];
  /** Checks the input before anything connects (throws UsageError); run() may assume it holds. */
  validate?(input: CommandInput): void;
  run(ctx: CommandContext, input: CommandInput): Promise<void>;
}
