/** The channel names this package follows are the ones the client and the recipes publish on. */
import { expect, it } from 'vitest';
import { REQUEST_CHANNEL as clientRequest, STATE_CHANNEL as clientState } from '@tenure/client';
import { GROUP_MEMBERS_CHANNEL as groupMembers } from '@tenure/group';
import { LEADER_STATE_CHANNEL as leaderState } from '@tenure/leader';
import { ACQUIRE_CHANNEL as locksAcquire } from '@tenure/locks';
import { ITEM_CHANNEL as queuesItem } from '@tenure/queues';
import * as channels from '../src/channels.js';

it('follows the channels of @tenure/client, locks, leader, group and queues by their names', () => {
  expect([
    channels.REQUEST_CHANNEL,
    channels.STATE_CHANNEL,
    channels.ACQUIRE_CHANNEL,
    channels.LEADER_STATE_CHANNEL,
    channels.GROUP_MEMBERS_CHANNEL,
    channels.QUEUE_ITEM_CHANNEL,
  ]).toEqual([clientRequest, clientState, locksAcquire, leaderState, groupMembers, queuesItem]);
  expect(locksAcquire).toBe('tenure:locks:acquire');
  expect(leaderState).toBe('tenure:leader:state');
  expect(groupMembers).toBe('tenure:group:members');
  expect(queuesItem).toBe('tenure:queues:item');
});
