/**
 * The JSON the page server sends to the page (the page imports these types too, so both sides
 * agree). Zxids, session ids and other 64-bit numbers are strings; data is base64.
 */
import type { ObserversReport } from '../inspect/observer-report.js';
import type { RecipeReport, SessionsReport } from '../inspect/report.js';

/** How changes reach the page. */
export type LiveMode = 'push' | 'polling';

/** GET /api/status */
export interface UiStatus {
  /** `push`: one persistent recursive watch feeds server-sent events; `polling`: the page asks every `pollMs`. */
  live: LiveMode;
  /** Why the page polls (the server refused persistent watches), or null. */
  liveReason: string | null;
  pollMs: number;
  /** Started with --write. */
  write: boolean;
  /** Basic auth is on. */
  auth: boolean;
  /** Listening beyond loopback (reachable from other machines). */
  exposed: boolean;
  /** The address the page server listens on, `host:port`. */
  listen: string;
  /** The ZooKeeper connect string (or a description of the transport). */
  zookeeper: string;
  /** The page server's own session, hex. */
  sessionId: string;
}

/** GET /api/overview and the `overview` event: every recipe found, and the sessions. */
export interface Overview {
  /** Increases with every snapshot. */
  version: number;
  /** When it was taken (ms since the epoch, the page server's clock). */
  at: number;
  report: RecipeReport | null;
  sessions: SessionsReport | null;
  /** The ensemble as the page server's client sees it (its config and host list); null if it could not be read. */
  ensemble?: EnsembleView | null;
  /** The elections' observers, from the servers' `wchp` (refreshed as the sessions are); null or absent when not asked yet. */
  observers?: ObserversReport | null;
  /** Why the report or the sessions could not be had, if so. */
  errors: string[];
}

/** One member of the config (the client's EnsembleMember; written out here, as the page is built without the client). */
export interface EnsembleMemberView {
  id: string;
  host: string;
  quorumPort: number;
  electionPort: number;
  role: 'participant' | 'observer';
  clientHost?: string;
  clientPort?: number;
}

/** The ensemble: /zookeeper/config's members (none for a standalone server) and the client's host list. */
export interface EnsembleView {
  members: EnsembleMemberView[];
  /** The config's version, hex ('' for none). */
  version: string;
  /** The servers the page server's client connects to (the ensemble's, when tracking follows a dynamic config). */
  hosts: string[];
  /** The server it is connected to now. */
  connectedServer: string | null;
}

/** The `tree` event: paths whose data or children changed; null means "anything may have". */
export interface TreeChange {
  paths: string[] | null;
}

/** The Stat with 64-bit fields as strings (`ephemeralOwner` hex). */
export interface StatView {
  czxid: string;
  mzxid: string;
  pzxid: string;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  ephemeralOwner: string;
  dataLength: number;
  numChildren: number;
}

/** One child in a listing. */
export interface ChildEntry {
  name: string;
  path: string;
  numChildren: number;
  dataLength: number;
  ephemeral: boolean;
}

/** GET /api/children?path=&offset=&limit= (names sorted; a page of them with their Stats). */
export interface ChildrenPage {
  path: string;
  total: number;
  offset: number;
  children: ChildEntry[];
}

/** One ACL entry; `perms` also spelled as zkCli does (`cdrwa`). */
export interface AclView {
  scheme: string;
  id: string;
  perms: number;
  permString: string;
}

/** GET /api/node?path= */
export interface NodeView {
  path: string;
  /** The bytes, base64. */
  data: string;
  /** The bytes as text when they read as text (valid UTF-8, no control characters but tab/LF/CR), else null. */
  text: string | null;
  stat: StatView;
  acl: AclView[];
  /** Why the ACL could not be read (NoAuth...), if so. */
  aclError: string | null;
}

/** POST /api/create, /api/set: data as UTF-8 text or base64. */
export interface WriteData {
  data?: string;
  encoding?: 'utf8' | 'base64';
}

export interface CreateRequest extends WriteData {
  path: string;
  sequential?: boolean;
}

export interface SetRequest extends WriteData {
  path: string;
  /** Expected version; -1 or absent for any. */
  version?: number;
}

export interface DeleteRequest {
  path: string;
  version?: number;
  /** Delete the subtree too. */
  recursive?: boolean;
}

/** An error answer of any route. */
export interface ErrorAnswer {
  error: string;
  /** ZooKeeper's error name when it came from ZooKeeper (`NONODE`, `NOAUTH`, ...). */
  code?: string;
}
