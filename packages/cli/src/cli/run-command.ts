/** Parses one command line (after the global options) and runs it with a client. */
import { parseArgs } from 'node:util';
import type { CommandContext, CommandInput, CommandSpec } from './command-spec.js';
import { findCommand } from './commands.js';
import { UsageError } from './usage-error.js';

export interface ParsedCommand {
  spec: CommandSpec;
  input: CommandInput;
}

/** `words[0]` is the command's name. Unknown commands, options and wrong arity are UsageErrors. */
export function parseCommand(words: readonly string[]): ParsedCommand {
  const name = words[0]!;
  const spec = findCommand(name);
  if (!spec) throw new UsageError(`unknown command ${JSON.stringify(name)} (tenure help lists them)`);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...words.slice(1)], options: spec.options ?? {}, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${spec.name}: ${(err as Error).message.split('\n')[0]!.split('. To specify')[0]} (usage: tenure ${spec.synopsis})`);
  }
  const args = parsed.positionals;
  if (args.length < spec.args.min || args.length > spec.args.max) {
    const want = spec.args.min === spec.args.max ? `${spec.args.min}` : `${spec.args.min} to ${spec.args.max}`;
    throw new UsageError(`${spec.name} takes ${want} argument${spec.args.max === 1 ? '' : 's'}, got ${args.length} (usage: tenure ${spec.synopsis})`);
  }
  return { spec, input: { args, flags: parsed.values } };
}

export function runParsed(ctx: CommandContext, cmd: ParsedCommand): Promise<void> {
  return cmd.spec.run(ctx, cmd.input);
}
