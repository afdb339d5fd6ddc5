/**
 * @tenure/leader: Curator-compatible LeaderLatch and LeaderSelector, with a fencing token (the
 * czxid of the winning node) and an AbortSignal for every leadership term, and LeaderObserver:
 * who leads, for processes that do not take part.
 */
export {
  LeaderLatch,
  LATCH_NAME,
  type LeaderLatchOptions,
  type LeaderLatchEvents,
  type CloseMode,
  type LatchState,
} from './leader-latch.js';
export {
  LeaderSelector,
  SELECTOR_LOCK_NAME,
  type LeaderSelectorOptions,
  type LeaderSelectorEvents,
  type TakeLeadership,
  type SelectorState,
} from './leader-selector.js';
export {
  LeaderObserver,
  type LeaderInfo,
  type LeaderObserverOptions,
  type LeaderObserverEvents,
  type ElectionRecipe,
} from './leader-observer.js';
export type { Leadership, ParticipantOptions } from './leadership.js';
export { LEADER_STATE_CHANNEL, leaderStateChannel, type LeaderStateMessage } from './diagnostics.js';
export { LeadershipLostError, type LeadershipEnd } from './errors.js';
export { electionOrder, sequenceAfter, type Participant } from './participants.js';
// The wait errors, so that one import suffices.
export { TimeoutError, AbortError, ClosedError } from '@tenure/client';
