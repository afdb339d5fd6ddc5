/**
 * Every command of `tenure`, in the order `help` lists them. A new command (e.g. `ui`) is one
 * CommandSpec added here.
 */
import type { CommandSpec } from './command-spec.js';
import { DUMP_COMMANDS } from './dump-commands.js';
import { ENSEMBLE_COMMANDS } from './ensemble-commands.js';
import { RECIPE_COMMANDS } from './recipe-commands.js';
import { KAZOO_COMMANDS } from './kazoo-commands.js';
import { TREE_COMMANDS } from './tree-commands.js';
import { UI_COMMANDS } from './ui-command.js';
import { ZK_COMMANDS } from './zk-commands.js';

export const COMMANDS: CommandSpec[] = [
  ...ZK_COMMANDS,
  ...TREE_COMMANDS,
  ...DUMP_COMMANDS,
  ...RECIPE_COMMANDS,
  ...KAZOO_COMMANDS,
  ...UI_COMMANDS,
  ...ENSEMBLE_COMMANDS,
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name) ?? COMMANDS.find((c) => c.name.toLowerCase() === name.toLowerCase());
}
