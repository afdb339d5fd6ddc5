/**
 * What an observer reports of a leader, and how an election's leader is read: the children sorted
 * by the recipe's name, the first node's data (the participant id) and Stat (czxid, ctime).
 */
import { NoNodeError, type Client, type WaitOptions } from '@tenure/client';
import { LATCH_NAME, SELECTOR_LOCK_NAME } from './layout.js';
import { electionOrder } from './participants.js';

const NAMES: Record<ElectionRecipe, string> = { 'leader-latch': LATCH_NAME, 'leader-selector': SELECTOR_LOCK_NAME };

/** Whether `recipe` names a layout the observer reads. */
export function isElectionRecipe(recipe: unknown): recipe is ElectionRecipe {
  return typeof recipe === 'string' && Object.hasOwn(NAMES, recipe);
}

const LATCH_NODE = new RegExp(`${LATCH_NAME}\\d{10}$`);

/** Which recipe's layout the path holds. */
export type ElectionRecipe = 'leader-latch' | 'leader-selector';

/** A leader of an election, as an observer sees it. */
export interface LeaderInfo {
  /** The participant id: the leader node's data, UTF-8 (as Curator reads it). */
  readonly participantId: string;
  /** The leader node's czxid: exactly the latch's (or selector's) own fencing token for this term. */
  readonly fencingToken: bigint;
  /**
   * When it became leader, as far as ZooKeeper lets anyone know. A change the observer saw
   * happen is dated by the notification that announced it (a notification's delay after the
   * fact). A leader found at start, or after the observer was away, is dated by its node's ctime:
   * exact when it has led since it joined (it joined an election without a leader), else the
   * earliest it can have led (ZooKeeper keeps no time of the predecessor's departure).
   */
  readonly since: Date;
  /** The leader node's full path. */
  readonly path: string;
}

/** The name the children sort by: the recipe's, or `latch-` when the path holds latch nodes, else `lock-`. */
export function layoutName(children: readonly string[], recipe: ElectionRecipe | undefined): string {
  if (recipe !== undefined) return NAMES[recipe];
  return children.some((c) => LATCH_NODE.test(c)) ? NAMES['leader-latch'] : NAMES['leader-selector'];
}

/** One read of the election's leader, no watch (current() on an observer that is not started). */
export async function readCurrentLeader(
  client: Client,
  path: string,
  recipe: ElectionRecipe | undefined,
  options: WaitOptions,
): Promise<LeaderInfo | undefined> {
  return client.wait(
    async (signal) => {
      for (;;) {
        let children: string[];
        try {
          children = (await client.getChildren(path, { signal })).children;
        } catch (err) {
          if (err instanceof NoNodeError) return undefined;
          throw err;
        }
        const first = electionOrder(children, layoutName(children, recipe))[0];
        if (first === undefined) return undefined;
        try {
          const { data, stat } = await client.getData(`${path}/${first}`, { signal });
          return Object.freeze({
            participantId: data.toString('utf8'),
            fencingToken: stat.czxid,
            since: new Date(stat.ctime),
            path: `${path}/${first}`,
          });
        } catch (err) {
          if (!(err instanceof NoNodeError)) throw err;
        }
      }
    },
    options,
    `leader observer ${path} current`,
  );
}
