/** @tenure/group: GroupMember, Curator-compatible group membership over ephemeral nodes; SetPartitioner, kazoo's. */
export { GroupMember, type GroupMemberOptions, type GroupMemberEvents, type Membership } from './group-member.js';
export { NodeConflictError } from '@tenure/nodes';
export {
  SetPartitioner,
  PartitionFailedError,
  PARTY_NODE,
  LOCKS_NODE,
  PARTITION_CHANNEL,
  type PartitionMessage,
  type Allocation,
  type SetPartitionerOptions,
  type SetPartitionerEvents,
} from './set-partitioner.js';
export { kazooPartition, partyMemberId, codePointOrder, pythonSorted, type PartitionFunction } from './partition-function.js';
export { GROUP_MEMBERS_CHANNEL, groupMembersChannel, type GroupMembersMessage } from './diagnostics.js';
