/** Parses one command line (after the global options) and runs it with a client. */
import { parseArgs } from 'node:util';
import { validatePath } from '@tenure/protocol';
import type { CommandContext, CommandInput, CommandSpec } from './command-spec.js';
import { findCommand } from './commands.js';
import { UsageError } from './usage-error.js';

/** Integer options, wherever a command has them, and their least value. */
const INTEGER_FLAGS: ReadonlyArray<[string, number]> = [
  ['version', -1],
  ['ttl', 1],
  ['limit', 1],
];

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
    throw new UsageError(
      `${spec.name}: ${(err as Error).message.split('\n')[0]!.split('. To specify')[0]} (usage: tenure ${spec.synopsis})`,
    );
  }
  const args = parsed.positionals;
  if (args.length < spec.args.min || args.length > spec.args.max) {
    const want = spec.args.min === spec.args.max ? `${spec.args.min}` : `${spec.args.min} to ${spec.args.max}`;
    throw new UsageError(
      `${spec.name} takes ${want} argument${spec.args.max === 1 ? '' : 's'}, got ${args.length} (usage: tenure ${spec.synopsis})`,
    );
  }
  // Paths are checked here too, so that a malformed one is a usage error before any connection.
  for (const i of spec.pathArgs ?? (spec.args.max > 0 ? [0] : [])) {
    const p = args[i];
    if (p === undefined) continue;
    try {
      validatePath(p);
    } catch (err) {
      throw new UsageError(`${spec.name}: ${(err as Error).message}`);
    }
  }
  const input = { args, flags: parsed.values };
  for (const [flag, min] of INTEGER_FLAGS) {
    const v = input.flags[flag];
    if (typeof v === 'string' && !(/^-?\d+$/.test(v) && Number(v) >= min && Number.isSafeInteger(Number(v)))) {
      throw new UsageError(
        `${spec.name}: --${flag}: expected an integer${min > -Infinity ? ` of at least ${min}` : ''}, got ${JSON.stringify(v)}`,
      );
    }
  }
  spec.validate?.(input);
  return { spec, input };
}

export function runParsed(ctx: CommandContext, cmd: ParsedCommand): Promise<void> {
  return cmd.spec.run(ctx, cmd.input);
}
