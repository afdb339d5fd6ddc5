/** The names in an election's node names (`_c_<uuid>-<name><10-digit seq>`), Curator's. */

/** Curator's LOCK_NAME for latches. */
export const LATCH_NAME = 'latch-';

/** InterProcessMutex's lock name, which LeaderSelector's nodes carry. */
export const SELECTOR_LOCK_NAME = 'lock-';
