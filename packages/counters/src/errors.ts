/** The errors of @tenure/counters, besides the client's (KeeperError, ClosedError, ...). */
import { TenureError } from '@tenure/client';

/**
 * The client's: a write whose outcome cannot be proven (the counters' `operation` is theirs, e.g.
 * `increment`). Re-exported, so `instanceof` holds for either import.
 */
export { OutcomeUnknownError } from '@tenure/client';

/** A node holds bytes that are not a value of the recipe's type (Curator: "Corrupted data for node"). */
export class CorruptedValueError extends TenureError {
  override name = 'CorruptedValueError';
  constructor(
    readonly path = '/',
    readonly bytes: Buffer = Buffer.alloc(0),
    expected = 'a value',
  ) {
    super(
      'CORRUPTED_VALUE',
      `Corrupted data for node "${path}": [${[...bytes].map((b) => '0x' + b.toString(16)).join(', ')}] (expected ${expected})`,
    );
  }
}
