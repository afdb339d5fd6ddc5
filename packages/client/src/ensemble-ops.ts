/**
 * getConfig and reconfig (ZooKeeper 3.5+): the requests, outside any namespace (and, in the
 * ZooKeeper transport, outside the chroot), and their replies as EnsembleConfig.
 */
import {
  KeeperError,
  OpCode,
  InvalidArgumentError,
  type GetDataRequest,
  type ReconfigRequest,
  type Reply,
  type GetDataResponse,
} from '@tenure/protocol';
import { CONFIG_NODE, formatMember, parseEnsembleConfig, type EnsembleConfig, type EnsembleMember } from './ensemble-config.js';

export interface ReconfigOptions {
  /** Servers to add (incremental): `server.N=host:q:e:role;clientHost:clientPort` lines or members. */
  joining?: readonly (string | EnsembleMember)[];
  /** Ids of servers to remove (incremental). */
  leaving?: readonly (string | number)[];
  /** The whole new membership (non-incremental); not with `joining`/`leaving`. */
  members?: readonly (string | EnsembleMember)[];
  /** Apply only if the current config has this version (hex, as getConfig gives it); BadVersion otherwise. */
  fromConfig?: string | bigint;
  signal?: AbortSignal;
}

export function configRequest(watch: boolean): GetDataRequest {
  return { type: OpCode.getData, path: CONFIG_NODE, watch };
}

export function mapConfig(reply: Reply<GetDataResponse>, path: string | undefined): EnsembleConfig {
  if (reply.err !== 0) throw KeeperError.from(reply.err, path);
  return parseEnsembleConfig(reply.response!.data ?? '');
}

function serverList(list: readonly (string | EnsembleMember)[] | undefined, what: string): string | null {
  if (list === undefined) return null;
  if (!Array.isArray(list)) throw new InvalidArgumentError(`reconfig: ${what} must be an array`);
  return list
    .map((s: string | EnsembleMember) => {
      if (typeof s === 'string') {
        const t = s.trim();
        if (t === '' || t.includes(',')) throw new InvalidArgumentError(`reconfig: bad ${what} entry ${JSON.stringify(s)}`);
        return t;
      }
      return formatMember(s);
    })
    .join(',');
}

function versionOf(v: string | bigint | undefined): bigint {
  if (v === undefined) return -1n;
  if (typeof v === 'bigint') return v;
  const t = v.trim().replace(/^0x/i, '');
  if (!/^[0-9a-f]+$/i.test(t)) throw new InvalidArgumentError(`reconfig: fromConfig must be a hex version, got ${JSON.stringify(v)}`);
  return BigInt('0x' + t);
}

export function reconfigRequest(options: ReconfigOptions): ReconfigRequest {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('reconfig: options are required');
  const { joining, leaving, members } = options;
  if (members !== undefined && (joining !== undefined || leaving !== undefined)) {
    throw new InvalidArgumentError('reconfig: give members (non-incremental) or joining/leaving (incremental), not both');
  }
  if (members === undefined && joining === undefined && leaving === undefined) {
    throw new InvalidArgumentError('reconfig: give joining, leaving or members');
  }
  let leavingServers: string | null = null;
  if (leaving !== undefined) {
    if (!Array.isArray(leaving)) throw new InvalidArgumentError('reconfig: leaving must be an array of server ids');
    leavingServers = leaving
      .map((id) => {
        const s = String(id).trim();
        if (!/^\d+$/.test(s)) throw new InvalidArgumentError(`reconfig: bad server id ${JSON.stringify(id)}`);
        return s;
      })
      .join(',');
  }
  return {
    type: OpCode.reconfig,
    joiningServers: serverList(joining, 'joining'),
    leavingServers,
    newMembers: serverList(members, 'members'),
    curConfigId: versionOf(options.fromConfig),
  };
}
