/** A raw session over a transport for the server's own tests: events and closes are recorded. */
import type { CloseReason, Connection, ConnectParams, CreateRequest, Transport, WatcherEvent } from '@tenure/protocol';
import { OPEN_ACL_UNSAFE, OpCode } from '@tenure/protocol';

export interface RawSession {
  conn: Connection;
  events: WatcherEvent[];
  closes: CloseReason[];
  /** Resolves with the close reason once the connection closes. */
  closed: Promise<CloseReason>;
  /** Resolves when `n` events have arrived in total. */
  eventCount(n: number, timeoutMs?: number): Promise<WatcherEvent[]>;
}

export async function open(transport: Transport, params: Partial<ConnectParams> = {}, host = transport.hosts[0]!): Promise<RawSession> {
  const s = await tryOpen(transport, params, host);
  if (s === 'expired') throw new Error('session expired');
  return s;
}

export async function tryOpen(
  transport: Transport,
  params: Partial<ConnectParams> = {},
  host = transport.hosts[0]!,
): Promise<RawSession | 'expired'> {
  const events: WatcherEvent[] = [];
  const closes: CloseReason[] = [];
  let onClosed!: (r: CloseReason) => void;
  const closed = new Promise<CloseReason>((r) => (onClosed = r));
  const waiters: Array<() => void> = [];
  const result = await transport.connect(
    host,
    { sessionId: 0n, passwd: Buffer.alloc(16), lastZxidSeen: 0n, timeoutMs: 10_000, readOnly: false, ...params },
    {
      onEvent(e) {
        events.push(e);
        for (const w of waiters.splice(0)) w();
      },
      onClose(r) {
        closes.push(r);
        onClosed(r);
      },
    },
  );
  if (result.kind === 'expired') return 'expired';
  const eventCount = (n: number, timeoutMs = 5000): Promise<WatcherEvent[]> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${n} events, got ${JSON.stringify(events)}`)), timeoutMs);
      const check = (): void => {
        if (events.length >= n) {
          clearTimeout(timer);
          resolve(events.slice());
        } else waiters.push(check);
      };
      check();
    });
  return { conn: result.connection, events, closes, closed, eventCount };
}

export function create(path: string, data: Buffer | null = null, flags = 0): CreateRequest {
  return { type: OpCode.create, path, data, acl: [...OPEN_ACL_UNSAFE], flags };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
