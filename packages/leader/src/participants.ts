/**
 * The election's order and its participants, read as Curator reads them: children sorted by the
 * sequence after the last occurrence of the recipe's name (`latch-` for LeaderLatch, `lock-` for
 * LeaderSelector), each participant's id in its node's data (UTF-8). The first node leads.
 */
import { NoNodeError, sortBySequence, type Client } from '@tenure/client';

export { sequenceAfter } from '@tenure/client';

/** One node of an election. */
export interface Participant {
  /** The id its owner gave (the node's data): Curator's participants show up with theirs. */
  readonly id: string;
  /** Whether this node is first in line: the leader's, as far as the election's order goes. */
  readonly isLeader: boolean;
  /** The node's full path. */
  readonly path: string;
}

/** Children in election order: the client's sequence-queue order (a stable sort by the sequence after `name`). */
export function electionOrder(children: readonly string[], name: string): string[] {
  return sortBySequence(children, name);
}

/**
 * Every participant in election order, each id read from its node (the reads are pipelined).
 * Nodes that vanish meanwhile are left out; the first remaining one is marked leader.
 */
export async function readParticipants(client: Client, path: string, name: string, signal?: AbortSignal): Promise<Participant[]> {
  let children: string[];
  try {
    children = (await client.getChildren(path, { signal })).children;
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
  const ordered = electionOrder(children, name);
  const ids = await Promise.all(
    ordered.map((child) =>
      client.getData(`${path}/${child}`, { signal }).then(
        (r) => r.data.toString('utf8'),
        (err: unknown) => {
          if (err instanceof NoNodeError) return null;
          throw err;
        },
      ),
    ),
  );
  const out: Participant[] = [];
  for (let i = 0; i < ordered.length; i++) {
    const id = ids[i];
    if (id === null || id === undefined) continue;
    out.push({ id, isLeader: out.length === 0, path: `${path}/${ordered[i]}` });
  }
  return out;
}

/** The first participant whose node still exists, or null when nobody takes part. */
export async function readLeader(client: Client, path: string, name: string, signal?: AbortSignal): Promise<Participant | null> {
  let children: string[];
  try {
    children = (await client.getChildren(path, { signal })).children;
  } catch (err) {
    if (err instanceof NoNodeError) return null;
    throw err;
  }
  for (const child of electionOrder(children, name)) {
    const nodePath = `${path}/${child}`;
    try {
      const { data } = await client.getData(nodePath, { signal });
      return { id: data.toString('utf8'), isLeader: true, path: nodePath };
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
  }
  return null;
}
