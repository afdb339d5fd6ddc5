/**
 * Protected creates, as Curator does them (`withProtection()`):
 * - the node is named `_c_<uuid>-<name>` (a sequential suffix follows the name);
 * - after a connection loss, before creating again, the client looks among the parent's children
 *   for a node with its prefix: the earlier create may have landed with its reply lost;
 * - an ephemeral found there that belongs to another session is deleted, not adopted;
 * - when the create finally fails without a definite answer (retries exhausted, aborted, session
 *   lost), the node it may have left is deleted in the background.
 */
import { ErrorCode, KeeperError, OpCode, isEphemeralMode, joinPath, nodeName, parentPath, type Stat } from '@tenure/protocol';
import type { ClientCore } from './client-core.js';
import { createWithParents, type CreateSpec, type Exec } from './create-node.js';

export const PROTECTED_PREFIX = '_c_';

/** `_c_<id>-` */
export function protectedPrefix(id: string): string {
  return `${PROTECTED_PREFIX}${id}-`;
}

/**
 * A random v4 UUID from the global Web Crypto (Node and browsers alike; no node:crypto, so a
 * browser bundle can carry this module). Browsers offer randomUUID only in secure contexts (https,
 * localhost); elsewhere the UUID is made from getRandomValues, which every context has.
 */
export function newProtectedId(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40; // version 4
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The protected id in a node name made by a protected create, or undefined. */
export function protectedIdOf(name: string): string | undefined {
  if (!name.startsWith(PROTECTED_PREFIX) || name.length < PROTECTED_PREFIX.length + 37) return undefined;
  const id = name.slice(PROTECTED_PREFIX.length, PROTECTED_PREFIX.length + 36);
  return name[PROTECTED_PREFIX.length + 36] === '-' ? id : undefined;
}

/** A node name without its protection prefix (Curator's ZKPaths / ProtectedUtils.normalize). */
export function unprotectedName(name: string): string {
  return protectedIdOf(name) === undefined ? name : name.slice(PROTECTED_PREFIX.length + 37);
}

/** The final error leaves it unknown whether the node was created. */
function outcomeUnknown(err: unknown): boolean {
  if (!(err instanceof KeeperError)) return true; // aborted, timed out, closed
  return (
    err.keeperCode === ErrorCode.CONNECTIONLOSS ||
    err.keeperCode === ErrorCode.OPERATIONTIMEOUT ||
    err.keeperCode === ErrorCode.SESSIONMOVED ||
    err.keeperCode === ErrorCode.SESSIONEXPIRED
  );
}

export async function protectedCreate(
  core: ClientCore,
  spec: CreateSpec,
  protectedId: string,
  clientPath: string,
  signal: AbortSignal | undefined,
): Promise<{ path: string; stat: Stat }> {
  const parent = parentPath(spec.path);
  const prefix = protectedPrefix(protectedId);
  const target: CreateSpec = { ...spec, path: joinPath(parent, prefix + nodeName(spec.path)) };
  const epoch = core.session.epoch;
  const exec: Exec = (req, map) => core.once(req, signal, clientPath, map, epoch);
  let first = true;
  let sent = false;
  try {
    return await core.retry(
      async () => {
        if (!first) {
          const found = await findProtectedNode(core, parent, prefix, isEphemeralMode(spec.mode), signal, epoch);
          if (found) return found;
        }
        first = false;
        sent = true;
        return await createWithParents(exec, target, clientPath);
      },
      signal,
      clientPath,
    );
  } catch (err) {
    if (sent && outcomeUnknown(err) && !core.closed) {
      core.logger.debug({ parent, prefix }, 'protected create failed; deleting a possible orphan in the background');
      void core.spawn('protected create clean-up', (s) => deleteProtectedNodes(core, parent, prefix, s));
    }
    throw err;
  }
}

/**
 * Our node under `parent`, found by its prefix. Ephemerals with the prefix that another session
 * owns are deleted, never adopted; a node of ours is preferred to any other match.
 */
async function findProtectedNode(
  core: ClientCore,
  parent: string,
  prefix: string,
  ephemeral: boolean,
  signal: AbortSignal | undefined,
  epoch: number,
): Promise<{ path: string; stat: Stat } | null> {
  const children = await core.once(
    { type: OpCode.getChildren, path: parent, watch: false },
    signal,
    parent,
    (r) => (r.err === 0 ? r.response!.children : r.err === ErrorCode.NONODE ? [] : fail(r.err, parent)),
    epoch,
  );
  let found: { path: string; stat: Stat } | null = null;
  for (const name of children) {
    if (!name.startsWith(prefix)) continue;
    const path = joinPath(parent, name);
    const stat = await core.once(
      { type: OpCode.exists, path, watch: false },
      signal,
      path,
      (r) => (r.err === 0 ? r.response!.stat : r.err === ErrorCode.NONODE ? null : fail(r.err, path)),
      epoch,
    );
    if (stat === null) continue;
    if (ephemeral && stat.ephemeralOwner !== core.session.sessionId) {
      core.logger.info({ path }, 'protected create found a node of its prefix owned by another session; deleting it');
      await core.once(
        { type: OpCode.delete, path, version: -1 },
        signal,
        path,
        (r) => (r.err === 0 || r.err === ErrorCode.NONODE ? undefined : fail(r.err, path)),
        epoch,
      );
      continue;
    }
    found ??= { path, stat };
  }
  return found;
}

/** Deletes every child of `parent` with our prefix (on whatever session is current). */
async function deleteProtectedNodes(core: ClientCore, parent: string, prefix: string, signal: AbortSignal): Promise<void> {
  const epoch = core.session.epoch;
  const children = await core.once(
    { type: OpCode.getChildren, path: parent, watch: false },
    signal,
    parent,
    (r) => (r.err === 0 ? r.response!.children : r.err === ErrorCode.NONODE ? [] : fail(r.err, parent)),
    epoch,
  );
  for (const name of children) {
    if (!name.startsWith(prefix)) continue;
    const path = joinPath(parent, name);
    await core.once(
      { type: OpCode.delete, path, version: -1 },
      signal,
      path,
      (r) => (r.err === 0 || r.err === ErrorCode.NONODE ? undefined : fail(r.err, path)),
      epoch,
    );
    core.logger.info({ path }, 'deleted the orphan of a failed protected create');
  }
}

function fail(code: number, path: string): never {
  throw KeeperError.from(code, path);
}
