/**
 * The Tree view's reads (one node with its Stat and ACL; a page of children with their Stats) and
 * the three writes `--write` allows (create, set data, delete). Listings are paged so that a node
 * with 100,000 children never reaches the page in one piece.
 */
import { CreateMode, KeeperError, type Client, type Stat, TenureError } from '@tenure/client';
import { permsText } from '../cli/acl-text.js';
import { decodeData, sessionHex } from '../inspect/index.js';
import type {
  AclView,
  ChildEntry,
  ChildrenPage,
  CreateRequest,
  DeleteRequest,
  NodeView,
  SetRequest,
  StatView,
  WriteData,
} from './api-types.js';

/** Most children one listing page returns. */
export const MAX_PAGE = 1_000;

/** The bytes as text by the CLI's rule (valid UTF-8 without control characters), else null. */
function asText(data: Buffer): string | null {
  const view = decodeData(data);
  return view.encoding === 'utf8' ? view.value : null;
}

export function statView(stat: Stat): StatView {
  return {
    czxid: stat.czxid.toString(),
    mzxid: stat.mzxid.toString(),
    pzxid: stat.pzxid.toString(),
    ctime: stat.ctime,
    mtime: stat.mtime,
    version: stat.version,
    cversion: stat.cversion,
    aversion: stat.aversion,
    ephemeralOwner: sessionHex(stat.ephemeralOwner),
    dataLength: stat.dataLength,
    numChildren: stat.numChildren,
  };
}

function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

export async function readNode(client: Client, path: string): Promise<NodeView> {
  const { data, stat } = await client.getData(path);
  let acl: AclView[] = [];
  let aclError: string | null = null;
  try {
    acl = (await client.getACL(path)).acl.map((a) => ({
      scheme: a.id.scheme,
      id: a.id.id,
      perms: a.perms,
      permString: permsText(a.perms),
    }));
  } catch (err) {
    aclError = err instanceof Error ? err.message : String(err);
  }
  return { path, data: data.toString('base64'), text: asText(data), stat: statView(stat), acl, aclError };
}

export async function listChildren(client: Client, path: string, offset: number, limit: number): Promise<ChildrenPage> {
  const { children } = await client.getChildren(path);
  children.sort();
  const slice = children.slice(offset, offset + Math.min(limit, MAX_PAGE));
  // One exists() per child, pipelined on the one connection; a child deleted meanwhile is left out.
  const stats = await Promise.all(slice.map((name) => client.exists(childPath(path, name))));
  const entries: ChildEntry[] = [];
  slice.forEach((name, i) => {
    const stat = stats[i];
    if (!stat) return;
    entries.push({
      name,
      path: childPath(path, name),
      numChildren: stat.numChildren,
      dataLength: stat.dataLength,
      ephemeral: stat.ephemeralOwner !== 0n,
    });
  });
  return { path, total: children.length, offset, children: entries };
}

/** Thrown for a write request that does not make sense; answered with 400. */
export class BadRequestError extends TenureError {
  override name = 'BadRequestError';
  constructor(message = 'bad request') {
    super('BAD_REQUEST', message);
  }
}

function bytesOf(body: WriteData): Buffer {
  const data = body.data ?? '';
  if (typeof data !== 'string') throw new BadRequestError('data must be a string');
  return body.encoding === 'base64' ? Buffer.from(data, 'base64') : Buffer.from(data, 'utf8');
}

function versionOf(body: { version?: unknown }): number {
  const v = body.version ?? -1;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < -1) throw new BadRequestError('version must be an integer (-1 for any)');
  return v;
}

function pathOf(body: { path?: unknown }): string {
  if (typeof body.path !== 'string' || !body.path.startsWith('/')) throw new BadRequestError('path must be an absolute path');
  return body.path;
}

export async function createNode(client: Client, body: Partial<CreateRequest>): Promise<{ path: string }> {
  const mode = body.sequential ? CreateMode.PERSISTENT_SEQUENTIAL : CreateMode.PERSISTENT;
  const { path } = await client.create(pathOf(body), bytesOf(body), { mode });
  return { path };
}

export async function setNode(client: Client, body: Partial<SetRequest>): Promise<{ stat: StatView }> {
  const stat = await client.setData(pathOf(body), bytesOf(body), { version: versionOf(body) });
  return { stat: statView(stat) };
}

export async function deleteNode(client: Client, body: Partial<DeleteRequest>): Promise<{ deleted: string }> {
  const path = pathOf(body);
  if (path === '/') throw new BadRequestError('the root cannot be deleted');
  await client.delete(path, { version: versionOf(body), deletingChildren: body.recursive === true });
  return { deleted: path };
}

/** ZooKeeper's error name for an error, when it is a KeeperError. */
export function keeperCode(err: unknown): string | undefined {
  return err instanceof KeeperError ? err.codeName : undefined;
}
