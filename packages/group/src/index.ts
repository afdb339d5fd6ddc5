/** @tenure/group: GroupMember, Curator-compatible group membership over ephemeral nodes. */
export { GroupMember, type GroupMemberOptions, type GroupMemberEvents, type Membership } from './group-member.js';
export { NodeConflictError } from '@tenure/nodes';
export { GROUP_MEMBERS_CHANNEL, groupMembersChannel, type GroupMembersMessage } from './diagnostics.js';
