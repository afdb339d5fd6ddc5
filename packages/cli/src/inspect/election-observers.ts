/**
 * Observers of elections: sessions that watch an election's path and own no participant node
 * there. An observer holds no node, so the tree cannot show it: only the servers' watch listing
 * can, the four-letter word `wchp` (path → sessions), asked of every server of the connect string
 * (each lists the watches of the sessions connected to it). ZooKeeper lists data watches only (a
 * LeaderObserver holds one on the path for this, beside its children watch); Tenure's servers list
 * children watches too. ZooKeeper 3.5+
 * answers only whitelisted words; when no server answers, `source` is `unavailable` and `problems`
 * says why.
 */
import type { ObservedElection, ObserversReport } from './observer-report.js';
import type { RecipeReport } from './report.js';
import { fourLetterWord, serversOf, type FourLetterWordOptions } from './session-words.js';

export interface InspectObserversOptions extends FourLetterWordOptions {
  /** Sessions never shown as observers (hex), e.g. the inspecting client's own. */
  exclude?: readonly string[];
}

/** Parses `wchp`: a path line, then a tab-indented session id per line. Server paths (chroot included). */
export function parseWchp(answer: string): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of answer.split('\n')) {
    if (line.startsWith('/')) {
      const path = line.trimEnd();
      current = byPath.get(path) ?? [];
      byPath.set(path, current);
    } else if (current !== null && /^\s+0x[0-9a-f]+\s*$/i.test(line)) {
      const id = `0x${BigInt(line.trim()).toString(16)}`;
      if (!current.includes(id)) current.push(id);
    }
  }
  return byPath;
}

/** The chroot of a connect string (`h1:2181,h2/apps` → `/apps`), '' when none. */
function chrootOf(connectString: string): string {
  const slash = connectString.indexOf('/');
  if (slash < 0) return '';
  const chroot = connectString.slice(slash).replace(/\/+$/, '');
  return chroot === '/' ? '' : chroot;
}

/**
 * The observers of every election in `report`: sessions that the servers' `wchp` lists as watching
 * the election's path and that own none of its participant nodes. `connectString` undefined (an
 * in-process transport): no server to ask. Never rejects for a refused word or an unreachable server.
 */
export async function inspectObservers(
  connectString: string | undefined,
  report: Pick<RecipeReport, 'elections'>,
  options: InspectObserversOptions = {},
): Promise<ObserversReport> {
  const servers = connectString === undefined ? [] : serversOf(connectString);
  const chroot = connectString === undefined ? '' : chrootOf(connectString);
  const problems: { server: string; reason: string }[] = [];
  if (servers.length === 0) problems.push({ server: '(in-process)', reason: 'no TCP server to ask wchp of' });
  const watchers = new Map<string, Map<string, string>>(); // server path → session → server
  const answeredBy = new Set<string>();
  await Promise.all(
    servers.map(async (server) => {
      let answer: string;
      try {
        answer = await fourLetterWord(server, 'wchp', options);
      } catch (err) {
        problems.push({ server, reason: err instanceof Error ? err.message : String(err) });
        return;
      }
      if (/is not executed because it is not in the whitelist/.test(answer)) {
        problems.push({ server, reason: answer.trim() });
        return;
      }
      for (const [path, ids] of parseWchp(answer)) {
        const sessions = watchers.get(path) ?? new Map<string, string>();
        watchers.set(path, sessions);
        for (const id of ids) if (!sessions.has(id)) sessions.set(id, server);
      }
      answeredBy.add(server);
    }),
  );
  problems.sort((a, b) => (a.server < b.server ? -1 : 1));
  const exclude = new Set(options.exclude ?? []);
  const elections = report.elections.map((e): ObservedElection => {
    const participants = new Set(e.participants.map((p) => p.sessionId));
    const sessions = watchers.get(chroot + e.path) ?? new Map<string, string>();
    const observers = [...sessions]
      .filter(([id]) => !participants.has(id) && !exclude.has(id))
      .map(([sessionId, server]) => ({ sessionId, server }))
      .sort((a, b) => (BigInt(a.sessionId) < BigInt(b.sessionId) ? -1 : 1));
    return { path: e.path, kind: e.kind, observers };
  });
  return { source: answeredBy.size > 0 ? 'four-letter-words' : 'unavailable', elections, problems };
}
