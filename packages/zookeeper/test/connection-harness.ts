/** Test helpers: open a connection through a transport and record what its handlers receive. */
import type { CloseReason, ConnectParams, Connection, Transport, WatcherEvent } from '@tenure/protocol';

export interface Recorded {
  events: { event: WatcherEvent; zxid: bigint }[];
  closes: CloseReason[];
  /** Resolves with the first close reason. */
  closed: Promise<CloseReason>;
  /** Resolves once `n` events have arrived. */
  waitEvents(n: number, timeoutMs?: number): Promise<WatcherEvent[]>;
}

export function recorder(): Recorded & { handlers: { onEvent(e: WatcherEvent, z: bigint): void; onClose(r: CloseReason): void } } {
  const events: Recorded['events'] = [];
  const closes: CloseReason[] = [];
  let resolveClosed!: (r: CloseReason) => void;
  const closed = new Promise<CloseReason>((r) => (resolveClosed = r));
  let waiters: (() => void)[] = [];
  return {
    events,
    closes,
    closed,
    handlers: {
      onEvent(event, zxid) {
        events.push({ event, zxid });
        for (const w of waiters) w();
      },
      onClose(reason) {
        closes.push(reason);
        resolveClosed(reason);
      },
    },
    waitEvents(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          if (events.length >= n) {
            clearTimeout(timer);
            waiters = waiters.filter((w) => w !== check);
            resolve(events.map((e) => e.event));
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => reject(new Error(`only ${events.length} of ${n} events after ${timeoutMs} ms`)), timeoutMs);
        if (!check()) waiters.push(check);
      });
    },
  };
}

export const NEW_SESSION: ConnectParams = {
  sessionId: 0n,
  passwd: Buffer.alloc(16),
  lastZxidSeen: 0n,
  timeoutMs: 4000,
  readOnly: false,
};

/** Opens a new session (or the one in `params`) and fails the test unless it connects. */
export async function open(
  transport: Transport,
  params: Partial<ConnectParams> = {},
  host = transport.hosts[0]!,
): Promise<{ connection: Connection } & Recorded> {
  const rec = recorder();
  const result = await transport.connect(host, { ...NEW_SESSION, ...params }, rec.handlers);
  if (result.kind !== 'connected') throw new Error(`expected a connection, got ${result.kind}`);
  return { connection: result.connection, ...rec };
}
