/** delete, and deletingChildren (Curator's deletingChildrenIfNeeded): the subtree bottom-up. */
import { ErrorCode, KeeperError, OpCode, joinPath, type Reply, type Request, type ResponseFor } from '@tenure/protocol';

/** Sends one request and maps its reply. */
export type ExecAny = <R extends Request, T>(req: R, map: (reply: Reply<ResponseFor<R>>) => T) => Promise<T>;

/** Deletes `path` (at `version`) after deleting all of its descendants. */
export async function deleteTree(exec: ExecAny, path: string, version: number, clientPath: string): Promise<void> {
  for (;;) {
    const children = await exec({ type: OpCode.getChildren, path, watch: false }, (r) => {
      if (r.err !== 0) throw KeeperError.from(r.err, clientPath);
      return r.response!.children;
    });
    for (const child of children) await deleteSubtree(exec, joinPath(path, child));
    const code = await exec({ type: OpCode.delete, path, version }, (r) => r.err);
    if (code === ErrorCode.OK) return;
    if (code !== ErrorCode.NOTEMPTY) throw KeeperError.from(code, clientPath);
    // A child appeared meanwhile: go round again.
  }
}

/** A descendant: already gone is fine. */
async function deleteSubtree(exec: ExecAny, path: string): Promise<void> {
  try {
    await deleteTree(exec, path, -1, path);
  } catch (err) {
    if (err instanceof KeeperError && err.keeperCode === ErrorCode.NONODE) return;
    throw err;
  }
}
