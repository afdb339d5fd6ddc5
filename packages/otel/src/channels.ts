/**
 * The diagnostics channels this instrumentation follows, and the shape of their messages, as
 * @tenure/client and the recipes publish them. Only the names and the fields read here make the
 * contract, so this package needs none of those packages (test/channels.test.ts checks the names
 * against theirs).
 */

/** A TracingChannel around every Client operation (@tenure/client's RequestMessage). */
export const REQUEST_CHANNEL = 'tenure:client:request';
/** Every connection state change (@tenure/client's StateMessage). */
export const STATE_CHANNEL = 'tenure:client:state';
/** A TracingChannel around every lock acquire, bracketing the wait (@tenure/locks' AcquireMessage). */
export const ACQUIRE_CHANNEL = 'tenure:locks:acquire';
/** Every leadership change (@tenure/leader's LeaderStateMessage). */
export const LEADER_STATE_CHANNEL = 'tenure:leader:state';
/** Every membership change a GroupMember sees (@tenure/group's GroupMembersMessage). */
export const GROUP_MEMBERS_CHANNEL = 'tenure:group:members';
/** A TracingChannel around the handling of each queue item (@tenure/queues' QueueItemMessage). */
export const QUEUE_ITEM_CHANNEL = 'tenure:queues:item';

export interface RequestMessage {
  op: string;
  path: string | undefined;
  server?: string | null;
  sessionId?: bigint;
  size?: number;
  error?: unknown;
  code?: string;
}

export interface StateMessage {
  state: string;
  previous: string | null;
  sessionId: bigint;
}

/** What the instrumentation reads of a granted lease. */
export interface LeaseLike {
  readonly path: string;
  readonly fencingToken: bigint;
  readonly signal: AbortSignal;
}

export interface AcquireMessage {
  lock: string;
  path: string;
  count: number;
  result?: LeaseLike | LeaseLike[];
  error?: unknown;
}

export interface LeaderStateMessage {
  recipe: string;
  path: string;
  id: string;
  leader: boolean;
  fencingToken: bigint;
  node: string;
  end?: string;
}

export interface GroupMembersMessage {
  path: string;
  memberId: string;
  members: string[];
}

export interface QueueItemMessage {
  queue: string;
  node: string;
  index: number;
  via: string;
  error?: unknown;
}
