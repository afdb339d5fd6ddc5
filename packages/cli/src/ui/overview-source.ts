/**
 * What the page's overview is made of: one bounded recipe walk (the inspect module's, the same the
 * `locks` / `leaders` / ... commands make) and the sessions from `cons` / `dump`, which fall back to
 * the owners of the ephemerals the walk saw when the server refuses those words.
 */
import { KeeperError, type Client } from '@tenure/client';
import { inspectObservers, inspectSessions, inspectWithWalk, sessionHex, type ObserversReport } from '../inspect/index.js';
import type { EnsembleView } from './api-types.js';
import type { OverviewSource } from './live-feed.js';

export interface OverviewSourceOptions {
  /** Where the walk starts; default '/'. */
  path?: string;
  /** The walk's node limit (the inspect module's default unless given). */
  limit?: number;
  /** The connect string whose servers are asked for sessions; none for an in-process transport. */
  connectString?: string;
}

/** Sessions are asked of the servers at most this often (the words cost the server a full scan). */
const SESSIONS_EVERY_MS = 1_000;

export function recipeOverview(client: Client, options: OverviewSourceOptions): OverviewSource {
  let sessions: Awaited<ReturnType<typeof inspectSessions>> | null = null;
  let sessionsAt = 0;
  let observers: ObserversReport | null = null;
  return async () => {
    const errors: string[] = [];
    const { report, walk } = await inspectWithWalk(client, {
      path: options.path ?? '/',
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
    if (sessions === null || Date.now() - sessionsAt >= SESSIONS_EVERY_MS) {
      try {
        sessions = await inspectSessions(options.connectString !== undefined ? { connectString: options.connectString } : {}, { walk });
        sessionsAt = Date.now();
        // Observers hold no node: only the servers' watch listing shows them (asked as often as the sessions).
        observers = await inspectObservers(options.connectString, report, { exclude: [sessionHex(client.sessionId)] });
      } catch (err) {
        errors.push(`sessions: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    let ensemble: EnsembleView | null = null;
    try {
      const config = await client.getConfig();
      ensemble = { members: config.members, version: config.version, hosts: [...client.hosts], connectedServer: client.connectedServer };
    } catch (err) {
      // A transport without ZooKeeper's config node has no ensemble to show; anything else is said.
      if (err instanceof KeeperError && (err.code === 'NONODE' || err.code === 'UNIMPLEMENTED')) {
        ensemble = { members: [], version: '', hosts: [...client.hosts], connectedServer: client.connectedServer };
      } else errors.push(`ensemble: ${err instanceof Error ? err.message : String(err)}`);
    }
    return { report, sessions, ensemble, observers, errors };
  };
}
