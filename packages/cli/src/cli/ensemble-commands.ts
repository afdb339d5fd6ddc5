/**
 * config (the ensemble's dynamic config, /zookeeper/config) and reconfig (ZooKeeper 3.5+'s
 * reconfig: --add / --remove incremental, --members the whole membership, --from the expected
 * version). Reconfig needs an authorised user: `--auth digest:super:PASSWORD` for a super user,
 * or a server run with skipACL.
 */
import type { EnsembleConfig, EnsembleMember } from '@tenure/client';
import { about } from './command-about.js';
import type { CommandSpec, FlagValues } from './command-spec.js';
import type { Output } from './output.js';
import { UsageError } from './usage-error.js';

function clientAddress(m: EnsembleMember): string {
  if (m.clientPort === undefined) return '-';
  const host = m.clientHost ?? '0.0.0.0';
  return `${host.includes(':') ? `[${host}]` : host}:${m.clientPort}`;
}

/** Prints a config: a table for people, `{ members, version, raw }` with --json. */
export function printConfig(out: Output, config: EnsembleConfig): void {
  if (out.json) {
    out.document(config);
    return;
  }
  if (config.members.length === 0) {
    out.line('no dynamic config (a standalone server)');
    return;
  }
  out.table(
    ['ID', 'HOST', 'QUORUM', 'ELECTION', 'ROLE', 'CLIENT'],
    config.members.map((m) => [m.id, m.host, String(m.quorumPort), String(m.electionPort), m.role, clientAddress(m)]),
  );
  out.line(`version ${config.version}`);
}

/** A repeatable flag's values, each split at commas ('--remove 1,2 --remove 3' → ['1','2','3']). */
function listFlag(flags: FlagValues, name: string): string[] | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  const values = (Array.isArray(v) ? v : [v]).map((x) => String(x));
  return values
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

const config: CommandSpec = {
  ...about('config'),
  args: { min: 0, max: 0 },
  async run({ client, out }) {
    printConfig(out, await client.getConfig());
  },
};

const reconfig: CommandSpec = {
  ...about('reconfig'),
  options: {
    add: { type: 'string', multiple: true },
    remove: { type: 'string', multiple: true },
    members: { type: 'string', multiple: true },
    from: { type: 'string' },
  },
  args: { min: 0, max: 0 },
  validate({ flags }) {
    const incremental = flags.add !== undefined || flags.remove !== undefined;
    if (flags.members !== undefined && incremental)
      throw new UsageError('reconfig: --members replaces the membership; not with --add/--remove');
    if (flags.members === undefined && !incremental) throw new UsageError('reconfig: give --add, --remove or --members');
    for (const id of listFlag(flags, 'remove') ?? []) {
      if (!/^\d+$/.test(id)) throw new UsageError(`reconfig --remove: expected server ids, got ${JSON.stringify(id)}`);
    }
    for (const line of [...(listFlag(flags, 'add') ?? []), ...(listFlag(flags, 'members') ?? [])]) {
      if (!/^server\.\d+=/.test(line))
        throw new UsageError(`reconfig: expected server.N=host:quorumPort:electionPort[:role][;clientPort], got ${JSON.stringify(line)}`);
    }
    if (flags.from !== undefined && !/^(0x)?[0-9a-f]+$/i.test(String(flags.from))) {
      throw new UsageError(`reconfig --from: expected a hex version, got ${JSON.stringify(flags.from)}`);
    }
  },
  async run({ client, out }, { flags }) {
    const joining = listFlag(flags, 'add');
    const leaving = listFlag(flags, 'remove');
    const members = listFlag(flags, 'members');
    const next = await client.reconfig({
      ...(joining !== undefined ? { joining } : {}),
      ...(leaving !== undefined ? { leaving } : {}),
      ...(members !== undefined ? { members } : {}),
      ...(typeof flags.from === 'string' ? { fromConfig: flags.from } : {}),
    });
    printConfig(out, next);
  },
};

export const ENSEMBLE_COMMANDS: readonly CommandSpec[] = [config, reconfig];
