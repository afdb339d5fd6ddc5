/**
 * NonBlockingLease and MultiNonBlockingLease: kazoo's timed leases (kazoo/recipe/lease.py), node
 * for node and byte for byte, so kazoo and Tenure processes contend for one lease. A lease answers
 * "is this period mine?" and holds no session: it is a record with an end time, not a lock.
 *
 * 1. Take kazoo's Lock on `<path>` itself (KazooLock, our identifier as its data; `<path>` is made
 *    persistent, as kazoo's `ensure_path`). It is held only for the steps below.
 * 2. Read `<path>/lease_holder`: JSON `{"version": 1, "holder": <identifier>, "end":
 *    "%Y-%m-%dT%H:%M:%S"}`, the end in UTC with no zone and whole seconds (kazoo's strptime
 *    refuses fractions), written as Python's `json.dumps` writes it.
 * 3. A record of another version: refused (kazoo leaves the lease to a client that knows it). A
 *    record of another holder whose end is still ahead (`now < end`): refused, with that holder
 *    and its end. Otherwise (no record, it ran out, or it is ours: a renewal) the lease is ours.
 * 4. Ours: replace the record with ours, end = now + duration truncated to the second (strftime),
 *    in one transaction that also checks our lock node, so a lock lost meanwhile writes nothing.
 * 5. Release the lock.
 *
 * MultiNonBlockingLease: leases `<path>/0` … `<path>/<count-1>` tried in order; the first
 * obtained is the answer, so at most `count` holders share a period.
 *
 * Time is the writers' wall clocks (the client's clock, as the embedded server turns it into wall
 * time): leases are only as exact as those clocks are synchronised.
 */
import {
  InvalidArgumentError,
  NoNodeError,
  TenureError,
  systemClock,
  type Client,
  type Clock,
  type WaitOptions,
  channelOf,
} from '@tenure/client';
import { validatePath } from '@tenure/protocol';
import { KazooLock } from './kazoo-lock.js';

/** The diagnostics channel of every attempt: a {@link LeaseAttemptMessage} per lease path tried. */
export const TIMED_LEASE_CHANNEL = 'tenure:locks:timed-lease';

/** What the timed-lease channel publishes. */
export interface LeaseAttemptMessage {
  readonly path: string;
  readonly identifier: string;
  readonly obtained: boolean;
  readonly holder: string;
  readonly endsAt: Date;
}

// The client's browser-safe channel lookup (silent where there is no diagnostics_channel).
const timedLeaseChannel = channelOf(TIMED_LEASE_CHANNEL);

/** kazoo's `NonBlockingLease._version`. */
export const LEASE_RECORD_VERSION = 1;
/** The record's node under the lease path. */
export const LEASE_HOLDER_NODE = 'lease_holder';

export interface LeaseOptions extends WaitOptions {
  /** Who holds the lease; the same identifier renews it. Default the host name (kazoo's `socket.gethostname()`). */
  identifier?: string;
  /** Wall time now (kazoo's `utcnow`). Default: the client's clock as wall time. */
  now?: () => Date;
}

export interface LeaseResult {
  /** True when the period is ours (a new lease or a renewal). */
  readonly obtained: boolean;
  /** Who holds the lease: us when obtained, the other holder when refused. */
  readonly holder: string;
  /** When the holder's period ends (whole seconds, UTC). Invalid when a record of another version carries none. */
  readonly endsAt: Date;
}

/** A lease record that is not kazoo's JSON. */
export class LeaseFormatError extends TenureError {
  override name = 'LeaseFormatError';
  constructor(
    readonly path = '/',
    detail = 'not a lease record',
  ) {
    super('LEASE_FORMAT', `${path}: ${detail}`);
  }
}

/** kazoo's NonBlockingLease: one holder per period. */
export const NonBlockingLease = {
  /** Tries to obtain (or renew) the lease at `path` for `durationMs`; waits only for kazoo's short lock. */
  obtain(client: Client, path: string, durationMs: number, options: LeaseOptions = {}): Promise<LeaseResult> {
    try {
      validatePath(path);
      checkDuration(durationMs);
      return attempt(client, path, durationMs, options, identifierOf(options));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  },
};

/** kazoo's MultiNonBlockingLease: at most `count` holders per period. */
export const MultiNonBlockingLease = {
  /** Tries `<path>/0` … `<path>/<count-1>` in order; the first obtained is the answer, else the last refusal. */
  async obtain(client: Client, path: string, count: number, durationMs: number, options: LeaseOptions = {}): Promise<LeaseResult> {
    validatePath(path);
    checkDuration(durationMs);
    if (!Number.isInteger(count) || count < 1)
      throw new InvalidArgumentError(`MultiNonBlockingLease: count must be a positive integer, got ${count}`);
    const identifier = identifierOf(options);
    let last: LeaseResult | undefined;
    for (let n = 0; n < count; n++) {
      last = await attempt(client, `${path === '/' ? '' : path}/${n}`, durationMs, options, identifier);
      if (last.obtained) return last;
    }
    return last!;
  },
};

async function attempt(client: Client, path: string, durationMs: number, options: LeaseOptions, identifier: string): Promise<LeaseResult> {
  const result = await attemptOnce(client, path, durationMs, options, identifier);
  if (timedLeaseChannel.hasSubscribers) timedLeaseChannel.publish({ path, identifier, ...result } satisfies LeaseAttemptMessage);
  return result;
}

async function attemptOnce(
  client: Client,
  path: string,
  durationMs: number,
  options: LeaseOptions,
  identifier: string,
): Promise<LeaseResult> {
  const holderPath = `${path}/${LEASE_HOLDER_NODE}`;
  const lock = new KazooLock(client, path, { identifier, logger: client.childLogger({ recipe: 'nonBlockingLease', path }) });
  try {
    const held = await lock.acquire({ signal: options.signal, timeoutMs: options.timeoutMs });
    try {
      const now = (options.now ?? wallClock(client.clock))().getTime();
      const current = await client.getData(holderPath).catch((err: unknown) => {
        if (err instanceof NoNodeError) return null;
        throw err;
      });
      if (current !== null) {
        const record = decodeLeaseRecord(current.data, holderPath);
        if (record.version !== LEASE_RECORD_VERSION) return { obtained: false, holder: record.holder, endsAt: record.endsAt };
        if (record.holder !== identifier && now < record.endsAt.getTime())
          return { obtained: false, holder: record.holder, endsAt: record.endsAt };
      }
      const endsAt = new Date(Math.floor((now + durationMs) / 1000) * 1000);
      const tx = client.transaction().check(held.path, -1);
      if (current !== null) tx.delete(holderPath, { version: current.stat.version });
      tx.create(holderPath, encodeLeaseRecord(identifier, endsAt));
      if (held.signal.aborted) throw held.signal.reason as Error;
      await tx.commit({ signal: options.signal });
      return { obtained: true, holder: identifier, endsAt };
    } finally {
      await held.release();
    }
  } finally {
    await lock.close();
  }
}

/** A decoded lease record; `endsAt` is invalid when a record of another version has no end we read. */
export interface LeaseRecord {
  version: unknown;
  holder: string;
  endsAt: Date;
}

/** Reads kazoo's record. LeaseFormatError when it is not JSON, or a version-1 record lacks its fields. */
export function decodeLeaseRecord(data: Buffer, path = LEASE_HOLDER_NODE): LeaseRecord {
  let v: unknown;
  try {
    v = JSON.parse(data.toString('utf8'));
  } catch {
    throw new LeaseFormatError(path, 'the lease record is not JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new LeaseFormatError(path, 'the lease record is not a JSON object');
  const o = v as Record<string, unknown>;
  const endsAt = typeof o.end === 'string' ? parseKazooTime(o.end) : new Date(NaN);
  const holder = typeof o.holder === 'string' ? o.holder : '';
  if (o.version === LEASE_RECORD_VERSION && (typeof o.holder !== 'string' || Number.isNaN(endsAt.getTime()))) {
    throw new LeaseFormatError(
      path,
      `a version 1 lease record needs a string holder and an end "%Y-%m-%dT%H:%M:%S", got ${data.toString('utf8')}`,
    );
  }
  return { version: o.version, holder, endsAt };
}

/** kazoo's record bytes: `json.dumps({'version': 1, 'holder': …, 'end': …})`, as Python writes them. */
export function encodeLeaseRecord(holder: string, endsAt: Date): Buffer {
  return Buffer.from(
    `{"version": ${LEASE_RECORD_VERSION}, "holder": ${pythonJsonString(holder)}, "end": "${formatKazooTime(endsAt)}"}`,
    'utf8',
  );
}

/** `%Y-%m-%dT%H:%M:%S` in UTC (Python's strftime on utcnow(): no zone, no fraction). */
export function formatKazooTime(at: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${p(at.getUTCFullYear(), 4)}-${p(at.getUTCMonth() + 1)}-${p(at.getUTCDate())}T${p(at.getUTCHours())}:${p(at.getUTCMinutes())}:${p(at.getUTCSeconds())}`;
}

const KAZOO_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})T(\d{1,2}):(\d{1,2}):(\d{1,2})$/;

/** strptime(`%Y-%m-%dT%H:%M:%S`) as UTC; an Invalid Date for anything else (fractions included, as kazoo). */
export function parseKazooTime(text: string): Date {
  const m = KAZOO_TIME.exec(text);
  if (m === null) return new Date(NaN);
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const at = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  // strptime refuses a day or an hour out of range; Date.UTC would roll it over.
  if (at.getUTCMonth() !== mo - 1 || at.getUTCDate() !== d || h > 23 || mi > 59 || s > 61) return new Date(NaN);
  return at;
}

/** Python's json.dumps of a str (ensure_ascii): JSON.stringify, with DEL and every non-ASCII code unit as a lowercase \uXXXX. */
function pythonJsonString(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const anchors = new WeakMap<Clock, { wall: number; mono: number }>();

/** Wall time on `clock`: Date.now() for the system clock; otherwise Date.now() at first use plus the clock's advance since (as the embedded server does). */
export function wallClock(clock: Clock): () => Date {
  if (clock === systemClock) return () => new Date();
  return () => {
    let a = anchors.get(clock);
    if (a === undefined) {
      a = { wall: Date.now(), mono: clock.now() };
      anchors.set(clock, a);
    }
    return new Date(a.wall + (clock.now() - a.mono));
  };
}

function checkDuration(ms: number): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0)
    throw new InvalidArgumentError(`a lease duration must be a positive number of ms, got ${String(ms)}`);
}

function identifierOf(options: LeaseOptions): string {
  const id = options.identifier ?? hostName();
  if (typeof id !== 'string' || id.length === 0) {
    throw new InvalidArgumentError('a lease needs an identifier (no host name to default to here)');
  }
  return id;
}

/** The host name in Node (`os.hostname()`, looked up at run time so browsers bundle this module); undefined elsewhere. */
export function hostName(): string | undefined {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const os = host?.getBuiltinModule?.('node:os') as { hostname(): string } | undefined;
  return os?.hostname();
}
