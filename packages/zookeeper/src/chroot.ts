/**
 * Chroot mapping (docs/zookeeper-wire-protocol.md §6.6): the client speaks client paths, the server server paths.
 * Outgoing: every path-bearing request, every multi sub-op, every SetWatches list and the
 * getEphemerals prefix, except getConfig's read of /zookeeper/config. Incoming: create results (also inside multi), sync, getEphemerals and
 * notifications. Unlike Java 3.5–3.9 we also map getEphemerals and multi create results, so a
 * chrooted client never sees a server path.
 */
import { OpCode, prependChroot, stripChroot } from '@tenure/protocol';
import type { GetEphemeralsResponse, MultiOp, MultiResponse, MultiResult, Request, Response, WatcherEvent } from '@tenure/protocol';

const add = (chroot: string, list: string[]): string[] => list.map((p) => prependChroot(chroot, p));

/**
 * ZooKeeper's config node, which getConfig reads (and watches) outside the chroot as the Java
 * client does: a getData of exactly this path, and a data watch on it, are not chrooted.
 */
export const CONFIG_NODE = '/zookeeper/config';
const addData = (chroot: string, list: string[]): string[] => list.map((p) => (p === CONFIG_NODE ? p : prependChroot(chroot, p)));

/** The request as the server must see it. Never mutates the caller's object. */
export function requestToServer(chroot: string, req: Request): Request {
  switch (req.type) {
    case OpCode.multi:
    case OpCode.multiRead:
      return { ...req, ops: req.ops.map((op) => ({ ...op, path: prependChroot(chroot, op.path) }) as MultiOp) };
    case OpCode.setWatches:
      return {
        ...req,
        dataWatches: addData(chroot, req.dataWatches),
        existWatches: add(chroot, req.existWatches),
        childWatches: add(chroot, req.childWatches),
      };
    case OpCode.setWatches2:
      return {
        ...req,
        dataWatches: addData(chroot, req.dataWatches),
        existWatches: add(chroot, req.existWatches),
        childWatches: add(chroot, req.childWatches),
        persistentWatches: add(chroot, req.persistentWatches),
        persistentRecursiveWatches: add(chroot, req.persistentRecursiveWatches),
      };
    case OpCode.getEphemerals: {
      // The server matches by string prefix: '/' (or empty) must mean "under the chroot", and the
      // trailing '/' keeps '/app' from matching a sibling '/apple'.
      const p = req.prefixPath;
      return { ...req, prefixPath: !p || p === '/' ? chroot + '/' : chroot + p };
    }
    case OpCode.getData:
      return req.path === CONFIG_NODE ? req : { ...req, path: prependChroot(chroot, req.path) };
    default:
      if ('path' in req) return { ...req, path: prependChroot(chroot, req.path) };
      return req;
  }
}

function stripResult(chroot: string, r: MultiResult): MultiResult {
  if (r.type === OpCode.create || r.type === OpCode.create2) return { ...r, path: stripChroot(chroot, r.path) };
  return r;
}

/** The response as the client must see it (called only for err 0 replies with a body). */
export function responseFromServer(chroot: string, opType: number, res: Response): Response {
  switch (opType) {
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
    case OpCode.createTTL:
    case OpCode.sync: {
      const r = res as { path: string };
      return { ...r, path: stripChroot(chroot, r.path) } as Response;
    }
    case OpCode.multi:
    case OpCode.multiRead: {
      const r = res as MultiResponse;
      return { results: r.results.map((x) => stripResult(chroot, x)) };
    }
    case OpCode.getEphemerals: {
      const r = res as GetEphemeralsResponse;
      const under = chroot + '/';
      return { ephemerals: r.ephemerals.filter((p) => p.startsWith(under)).map((p) => p.slice(chroot.length)) };
    }
    default:
      return res;
  }
}

/** A notification with its path stripped (ZooKeeper 3.9's rule: paths outside the chroot stay as they are). */
export function eventFromServer(chroot: string, ev: WatcherEvent): WatcherEvent {
  return { type: ev.type, state: ev.state, path: stripChroot(chroot, ev.path) };
}
