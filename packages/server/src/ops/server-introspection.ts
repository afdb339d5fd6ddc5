/**
 * What the embedded server shows of itself, read-only: its zxid, sessions, watches, nodes and
 * settings. Tests and tools read it through EmbeddedServer's methods, the four-letter words
 * through a front door. It reads the server's structures and changes none of them.
 */
import type { ACL, Stat } from '@tenure/protocol';
import type { ConnectionLimits } from '../front-doors/connection-limits.js';
import type { DataTree } from '../semantics/data-tree.js';
import type { ResolvedOptions } from '../options.js';
import type { ZxidCounter } from '../semantics/request-processor.js';
import type { ServerConnection } from '../semantics/server-connection.js';
import type { Session, SessionTable } from '../semantics/session-table.js';
import type { Clock } from '@tenure/protocol';
import type { SessionWheel } from '../semantics/session-wheel.js';
import { watchCount } from '../semantics/watch-registry.js';

/** One session as introspection shows it (like ZooKeeper's `dump`). */
export interface SessionInfo {
  sessionId: bigint;
  timeoutMs: number;
  /** A connection is bound to the session right now. */
  connected: boolean;
  /** Paths of the session's ephemeral nodes. */
  ephemerals: string[];
  /** Watch entries held by the session's connection (a persistent watch counts once per table). */
  watches: number;
  /** When the session expires if nothing more arrives, ms from now. */
  expiresInMs: number | undefined;
}

/** A copy of one node, for tests and tools. */
export interface NodeSnapshot {
  path: string;
  data: Buffer | null;
  stat: Stat;
  acl: ACL[];
  children: string[];
}

/** The settings ZooKeeper's `conf` shows. */
export type ServerConfig = Readonly<
  Pick<
    ResolvedOptions,
    | 'tickMs'
    | 'minSessionTimeoutMs'
    | 'maxSessionTimeoutMs'
    | 'maxBufferBytes'
    | 'maxClientCnxns'
    | 'globalOutstandingLimit'
    | 'fourLetterWords'
  >
>;

/** The server structures introspection reads. */
export interface IntrospectedState {
  readonly config: ServerConfig;
  readonly zxid: ZxidCounter;
  readonly tree: DataTree;
  readonly sessions: SessionTable<ServerConnection>;
  readonly wheel: SessionWheel<Session<ServerConnection>>;
  readonly connections: ReadonlySet<ServerConnection>;
  readonly clock: Clock;
  /** Requests owed and traffic counts (connection-limits.ts). */
  readonly limits?: ConnectionLimits;
  /** The tree and sessions live in a shared store (createReplicatedServer): sessions are the namespace's, connections this server's. */
  readonly shared?: boolean;
}

export class ServerIntrospection {
  readonly config: ServerConfig;

  constructor(private readonly state: IntrospectedState) {
    this.config = state.config;
  }

  /** Whether sessions live in a shared store that several servers serve (their expiry is the store's lease, not this wheel). */
  get shared(): boolean {
    return this.state.shared === true;
  }

  /** The last zxid, which rises with every write and never goes back. */
  get zxid(): bigint {
    return this.state.zxid.last;
  }

  /** Live sessions with their ephemerals, like ZooKeeper's `dump`. */
  sessions(): SessionInfo[] {
    const { tree, wheel } = this.state;
    const now = this.state.clock.now();
    return [...this.state.sessions].map((s) => {
      const at = wheel.expiryTime(s);
      return {
        sessionId: s.id,
        timeoutMs: s.timeoutMs,
        connected: s.connection !== undefined,
        ephemerals: [...(tree.ephemerals.get(s.id) ?? [])],
        watches: s.connection === undefined ? 0 : watchCount(s.connection),
        expiresInMs: at === undefined ? undefined : Math.max(0, at - now),
      };
    });
  }

  /** Watch entries per connected session. */
  watchCounts(): Map<bigint, number> {
    const out = new Map<bigint, number>();
    for (const c of this.state.connections) out.set(c.session.id, (out.get(c.session.id) ?? 0) + watchCount(c));
    return out;
  }

  /** The paths a session's connection watches, by kind. */
  watchesOf(sessionId: bigint): { data: string[]; child: string[] } {
    const conn = this.state.sessions.get(sessionId)?.connection;
    return {
      data: [...(conn?.watchModes('data')?.keys() ?? [])],
      child: [...(conn?.watchModes('child')?.keys() ?? [])],
    };
  }

  /** Requests received and not yet answered, over every connection (ZooKeeper's "Outstanding"). */
  get outstanding(): number {
    return this.state.limits?.outstanding ?? 0;
  }

  /** Ephemeral nodes over every session (ZooKeeper's ephemerals_count). */
  get ephemeralCount(): number {
    let n = 0;
    for (const paths of this.state.tree.ephemerals.values()) n += paths.size;
    return n;
  }

  /** Path and data bytes over every node (ZooKeeper's approximate_data_size). */
  get approximateDataSize(): number {
    let n = 0;
    for (const [path, node] of this.state.tree.nodes) n += path.length + node.dataLength;
    return n;
  }

  /** Live sessions (ZooKeeper's global_sessions). */
  get sessionCount(): number {
    return this.state.sessions.size;
  }

  /** Nodes in the tree, the system nodes included (ZooKeeper's "Node count"). */
  get nodeCount(): number {
    return this.state.tree.nodes.size;
  }

  /** Open connections. */
  get connectionCount(): number {
    return this.state.connections.size;
  }

  /** A copy of one node, or undefined. */
  node(path: string): NodeSnapshot | undefined {
    const n = this.state.tree.get(path);
    if (n === undefined) return undefined;
    return {
      path,
      data: n.data,
      stat: n.stat(),
      acl: n.acl.map((a) => ({ perms: a.perms, id: { ...a.id } })),
      children: [...n.children],
    };
  }

  /** A text dump of the sessions and their ephemerals. */
  dump(): string {
    const lines = [`zxid 0x${this.zxid.toString(16)}`, `sessions ${this.state.sessions.size}`];
    for (const s of this.sessions()) {
      lines.push(`0x${BigInt.asUintN(64, s.sessionId).toString(16)} timeout=${s.timeoutMs} connected=${s.connected} watches=${s.watches}`);
      for (const p of s.ephemerals) lines.push(`\t${p}`);
    }
    return lines.join('\n');
  }
}
