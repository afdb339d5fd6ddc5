/**
 * What a ZooKeeper server holds right now, read through the four-letter words `dump` (sessions and
 * their ephemerals) and `wchc` (watched paths per session). Used by tests to prove that a closed
 * handle left nothing behind.
 */

export interface SessionDump {
  /** The session id. */
  sessionId: bigint;
  /** Paths of this session's ephemeral nodes, sorted. */
  ephemerals: string[];
  /** Paths this session watches (one-shot and persistent alike), sorted. */
  watchedPaths: string[];
  /** `watchedPaths.length`. */
  watches: number;
}

export interface ServerDump {
  /** Every live session, with its ephemerals and watches, by id. */
  sessions: SessionDump[];
  /** Sum of `watches` over all sessions. */
  totalWatches: number;
  /** The raw answers, for debugging. */
  raw: { dump: string; wchc: string };
}

const SESSION_ID = /^0x([0-9a-f]+):?$/i;

function parseHex(text: string): bigint {
  return BigInt.asIntN(64, BigInt('0x' + text));
}

/** `sessionId → paths` from a section of `0x<id>[:]` lines followed by tab-indented paths. */
function parseIndentedSections(lines: string[]): Map<bigint, string[]> {
  const out = new Map<bigint, string[]>();
  let current: string[] | undefined;
  for (const line of lines) {
    const m = SESSION_ID.exec(line.trim());
    if (m && !line.startsWith('\t')) {
      current = [];
      out.set(parseHex(m[1]!), current);
    } else if (line.startsWith('\t') && current) {
      current.push(line.trim());
    }
  }
  return out;
}

/** Parses the answers of `dump` and `wchc` from ZooKeeper 3.5–3.9. */
export function parseServerDump(dump: string, wchc: string): ServerDump {
  const lines = dump.split('\n');
  const ephemeralsAt = lines.findIndex((l) => l.startsWith('ephemeral nodes dump'));
  const connectionsAt = lines.findIndex((l) => l.startsWith('Connections dump'));
  const trackerLines = lines.slice(0, ephemeralsAt < 0 ? lines.length : ephemeralsAt);
  const ephemeralLines = ephemeralsAt < 0 ? [] : lines.slice(ephemeralsAt + 1, connectionsAt < 0 ? lines.length : connectionsAt);

  const ids = new Set<bigint>();
  // The session tracker lists live sessions as tab-indented ids under their expiry buckets.
  for (const l of trackerLines) {
    const m = /^\t0x([0-9a-f]+)$/i.exec(l);
    if (m) ids.add(parseHex(m[1]!));
  }
  const ephemerals = parseIndentedSections(ephemeralLines);
  const watches = parseIndentedSections(wchc.split('\n'));
  for (const id of ephemerals.keys()) ids.add(id);
  for (const id of watches.keys()) ids.add(id);

  const sessions = [...ids]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((sessionId): SessionDump => {
      const watchedPaths = [...(watches.get(sessionId) ?? [])].sort();
      return { sessionId, ephemerals: [...(ephemerals.get(sessionId) ?? [])].sort(), watchedPaths, watches: watchedPaths.length };
    });
  return { sessions, totalWatches: sessions.reduce((n, s) => n + s.watches, 0), raw: { dump, wchc } };
}
