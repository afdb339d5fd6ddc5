/**
 * The group recipe's diagnostics channel. `tenure:group:members` carries every membership change a
 * GroupMember in this process sees, as it emits `change`. Nothing is published while nobody subscribes.
 */
import { channelOf } from '@tenure/client';

export const GROUP_MEMBERS_CHANNEL = 'tenure:group:members';

/** The message of `tenure:group:members`. */
export interface GroupMembersMessage {
  /** The group's membership path. */
  path: string;
  /** The member that saw the change (this process's). */
  memberId: string;
  /** The members' ids, sorted. */
  members: string[];
}

export const groupMembersChannel = channelOf(GROUP_MEMBERS_CHANNEL);
