/**
 * The commands for kazoo's recipes (inspect/kazoo-layouts.ts): `partitions` (SetPartitioner: item →
 * holder) and `leases` (NonBlockingLease records: holder, time left). Same walk and flags as the
 * other recipe commands.
 */
import { dataText } from '../inspect/index.js';
import type { CommandSpec } from './command-spec.js';
import { formatDuration } from './output.js';
import { recipeCommand } from './recipe-commands.js';

const partitions = recipeCommand(
  'partitions',
  'partitions',
  'no partitioned sets found',
  ['SET', 'ITEM', 'HOLDER', 'SESSION', 'TOKEN', 'HELD FOR', 'WAITING'],
  (items) =>
    items.flatMap((p) =>
      p.items.map((i) => [
        p.path,
        i.item,
        i.holder === null ? '-' : (i.holder.memberId ?? dataText(i.holder.data)),
        i.holder?.sessionId ?? '-',
        i.holder?.fencingToken ?? '-',
        formatDuration(i.holder?.heldForMs ?? null),
        String(i.waiting),
      ]),
    ),
);

const leases = recipeCommand('leases', 'timedLeases', 'no timed leases found', ['LEASE', 'HOLDER', 'ENDS (UTC)', 'TIME LEFT'], (items) =>
  items.map((l) => [
    l.path,
    l.holder,
    l.endsAt === null ? '-' : new Date(l.endsAt).toISOString().replace('.000Z', 'Z'),
    l.running ? formatDuration(l.timeLeftMs) : 'ended',
  ]),
);

export const KAZOO_COMMANDS: readonly CommandSpec[] = [partitions, leases];
