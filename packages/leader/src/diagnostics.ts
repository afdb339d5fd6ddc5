/**
 * The leader recipes' diagnostics channel. `tenure:leader:state` carries every leadership change
 * of a LeaderLatch or LeaderSelector in this process, as it emits `isLeader` / `notLeader`.
 * Nothing is published while nobody subscribes.
 */
import { channelOf } from '@tenure/client';
import type { LeadershipEnd } from './errors.js';

export const LEADER_STATE_CHANNEL = 'tenure:leader:state';

/** The message of `tenure:leader:state`. */
export interface LeaderStateMessage {
  recipe: 'latch' | 'selector';
  /** The election's path. */
  path: string;
  /** The participant's id. */
  id: string;
  /** True as the term starts, false as it ends. */
  leader: boolean;
  /** The term's fencing token (its node's czxid). */
  fencingToken: bigint;
  /** The winning node's path. */
  node: string;
  /** Why the term ended (with `leader: false`). */
  end?: LeadershipEnd;
}

export const leaderStateChannel = channelOf(LEADER_STATE_CHANNEL);

export function publishLeaderState(message: LeaderStateMessage): void {
  if (leaderStateChannel.hasSubscribers) leaderStateChannel.publish(message);
}
