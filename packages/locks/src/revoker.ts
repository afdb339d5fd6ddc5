/**
 * Revoker: asks the holder of a lock node to give it up, with Curator's cooperative protocol. It
 * writes `__REVOKE__` as the node's data; a holder that made its lock revocable (Tenure's
 * `makeRevocable` or Curator's) is told and decides whether to release. Works across Tenure and
 * Curator holders alike.
 */
import { NoNodeError, type Client } from '@tenure/client';

/** The data that asks for revocation (Curator's LockInternals.REVOKE_MESSAGE). */
export const REVOKE_MESSAGE: Buffer = Buffer.from('__REVOKE__', 'utf8');

export const Revoker = {
  /**
   * Asks the holder of `nodePath` (a lock node, e.g. from `participantNodes()`) to release it.
   * A node already gone is not an error.
   */
  async attemptRevoke(client: Client, nodePath: string): Promise<void> {
    try {
      await client.setData(nodePath, REVOKE_MESSAGE);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
  },
} as const;
