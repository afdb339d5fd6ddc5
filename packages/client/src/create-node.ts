/**
 * create with create2 (the reply carries the Stat), createContainer or createTTL as the mode
 * requires, optionally creating missing parents (persistent or container nodes, as Curator's
 * creatingParentsIfNeeded / creatingParentContainersIfNeeded).
 */
import {
  BadArgumentsError,
  CreateMode,
  ErrorCode,
  KeeperError,
  MAX_TTL_MS,
  NoNodeError,
  OpCode,
  isTtlMode,
  parentPath,
  type ACL,
  type CreateRequest,
  type CreateTTLRequest,
  type Create2Response,
  type CreateResponse,
  type Reply,
  type Stat,
} from '@tenure/protocol';

export type AnyCreateRequest = CreateRequest | CreateTTLRequest;

export type CreateReply = Reply<CreateResponse | Create2Response>;

/** Sends one request and maps its reply; the caller decides whether it retries. */
export type Exec = <T>(req: AnyCreateRequest, map: (reply: CreateReply) => T) => Promise<T>;

export interface CreateSpec {
  /** Server path (namespace applied). */
  path: string;
  data: Buffer;
  mode: CreateMode;
  acl: readonly ACL[];
  ttl: bigint | null;
  parents: 'none' | 'persistent' | 'container';
  /** ACL for parents created on the way. */
  parentAcl: (path: string) => readonly ACL[];
}

const EMPTY = Buffer.alloc(0);
const VALID_MODES = new Set<number>(Object.values(CreateMode));

/** Checks a mode and its TTL; returns the TTL to send (null for modes without one). */
export function checkModeAndTtl(path: string, mode: number, ttlMs: number | bigint | undefined): bigint | null {
  if (!VALID_MODES.has(mode)) throw new BadArgumentsError(path, `unknown create mode ${String(mode)}`);
  if (isTtlMode(mode)) {
    if (ttlMs === undefined) throw new BadArgumentsError(path, 'a TTL mode needs ttlMs');
    const ttl = BigInt(ttlMs);
    if (ttl <= 0n || ttl > MAX_TTL_MS) throw new BadArgumentsError(path, `ttlMs must be in 1..${MAX_TTL_MS}, got ${String(ttlMs)}`);
    return ttl;
  }
  if (ttlMs !== undefined)
    throw new BadArgumentsError(path, 'ttlMs is only allowed with PERSISTENT_WITH_TTL or PERSISTENT_SEQUENTIAL_WITH_TTL');
  return null;
}

export function createRequest(path: string, data: Buffer, acl: readonly ACL[], mode: number, ttl: bigint | null): AnyCreateRequest {
  const aclList = acl as ACL[];
  if (ttl !== null) return { type: OpCode.createTTL, path, data, acl: aclList, flags: mode, ttl };
  if (mode === CreateMode.CONTAINER) return { type: OpCode.createContainer, path, data, acl: aclList, flags: mode };
  return { type: OpCode.create2, path, data, acl: aclList, flags: mode };
}

/** The create's result (server path), or the server's error. */
export function mapCreate(clientPath: string): (reply: CreateReply) => { path: string; stat: Stat } {
  return (reply) => {
    if (reply.err !== 0) throw KeeperError.from(reply.err, clientPath);
    // create2, createContainer and createTTL all answer with Create2Response.
    const r = reply.response as Create2Response;
    return { path: r.path, stat: r.stat };
  };
}

const ignore = (reply: CreateReply): number => reply.err;

/** Creates `spec`, and its missing parents on NoNode when asked to. */
export async function createWithParents(exec: Exec, spec: CreateSpec, clientPath: string): Promise<{ path: string; stat: Stat }> {
  const req = createRequest(spec.path, spec.data, spec.acl, spec.mode, spec.ttl);
  const map = mapCreate(clientPath);
  if (spec.parents === 'none') return exec(req, map);
  try {
    return await exec(req, map);
  } catch (err) {
    if (!(err instanceof NoNodeError)) throw err;
  }
  await ensurePath(exec, parentPath(spec.path), spec.parents === 'container', spec.parentAcl);
  return exec(req, map);
}

/**
 * Makes sure `path` exists, creating it and its missing ancestors. Works bottom-up: the usual case
 * (only the last levels missing) costs one create per missing level.
 * @returns true when this call created `path` itself
 */
export async function ensurePath(exec: Exec, path: string, containers: boolean, aclOf: (path: string) => readonly ACL[]): Promise<boolean> {
  if (path === '/' || path === '') return false;
  const req = createRequest(path, EMPTY, aclOf(path), containers ? CreateMode.CONTAINER : CreateMode.PERSISTENT, null);
  const code = await exec(req, ignore);
  if (code === ErrorCode.OK) return true;
  if (code === ErrorCode.NODEEXISTS) return false;
  if (code !== ErrorCode.NONODE) throw KeeperError.from(code, path);
  await ensurePath(exec, parentPath(path), containers, aclOf);
  const again = await exec(req, ignore);
  if (again === ErrorCode.OK) return true;
  if (again === ErrorCode.NODEEXISTS) return false;
  throw KeeperError.from(again, path);
}
