/** A sequential node as the reports show it: its session, data, fencing token (czxid) and sequence. */
import { decodeData, sessionHex } from './node-data.js';
import type { QueueNode } from './report.js';
import { sequenceOf, type WalkedNode } from './tree-walk.js';

export function queueNode(n: WalkedNode): QueueNode {
  return {
    name: n.name,
    path: n.path,
    sessionId: sessionHex(n.stat.ephemeralOwner),
    data: decodeData(n.data),
    fencingToken: n.stat.czxid.toString(),
    ctime: n.stat.ctime,
    sequence: sequenceOf(n.name),
  };
}
