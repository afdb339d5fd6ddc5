/** Curator's five connection states, as strings so that logs and JavaScript callers read them plainly. */
export const ConnectionState = {
  CONNECTED: 'CONNECTED',
  SUSPENDED: 'SUSPENDED',
  RECONNECTED: 'RECONNECTED',
  LOST: 'LOST',
  READ_ONLY: 'READ_ONLY',
} as const;
export type ConnectionState = (typeof ConnectionState)[keyof typeof ConnectionState];

/**
 * What recipes treat as an error state.
 * - `standard` (Curator's default): SUSPENDED and LOST;
 * - `session`: LOST only.
 */
export type ErrorPolicy = 'standard' | 'session';

export function isErrorStateFor(policy: ErrorPolicy, state: ConnectionState): boolean {
  if (state === ConnectionState.LOST) return true;
  return policy === 'standard' && state === ConnectionState.SUSPENDED;
}

/** The states in which requests reach a server. */
export function isConnectedState(state: ConnectionState | null): boolean {
  return state === ConnectionState.CONNECTED || state === ConnectionState.RECONNECTED || state === ConnectionState.READ_ONLY;
}
