/**
 * One AbortSignal per client that aborts with ClosedError when the client closes: the client has
 * no public close event, but `waitForState([])` (no target: it never resolves) rejects with
 * ClosedError at close. One such wait per client object, shared by every lock and lease on it.
 */
import { setMaxListeners } from 'node:events';
import { ClosedError, type Client } from '@tenure/client';

const signals = new WeakMap<Client, AbortSignal>();

export function clientClosedSignal(client: Client): AbortSignal {
  let signal = signals.get(client);
  if (signal === undefined) {
    const ac = new AbortController();
    signal = ac.signal;
    setMaxListeners(0, signal); // every pending acquire and every lease on the client listens
    signals.set(client, signal);
    if (client.closed) ac.abort(new ClosedError('client'));
    else client.waitForState([]).catch((err: unknown) => ac.abort(err instanceof ClosedError ? err : new ClosedError('client')));
  }
  return signal;
}
