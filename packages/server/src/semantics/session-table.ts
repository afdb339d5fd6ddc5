/**
 * Sessions: random ids and passwords, and the table the server keeps them in. A session is
 * generic over its connection type so that this file need not know the connection (no import cycle).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { CONTAINER_EPHEMERAL_OWNER } from '@tenure/protocol';

export class Session<C> {
  /** The connection currently bound to the session on this server. */
  connection: C | undefined;
  /** Closed or expired: no request is served any more. */
  closing = false;

  constructor(
    readonly id: bigint,
    readonly passwd: Buffer,
    public timeoutMs: number,
  ) {}
}

/**
 * Random bytes are drawn from a pool refilled by crypto, so that a session costs a 16-byte view
 * of the pool rather than a buffer of its own.
 */
const POOL_BYTES = 16 * 1024;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function take(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

/** 64 random bits, avoiding 0 and the owner values that mark containers and TTL nodes. */
function randomSessionId(): bigint {
  for (;;) {
    const id = take(8).readBigInt64BE(0);
    if (id === 0n || id === CONTAINER_EPHEMERAL_OWNER) continue;
    if (BigInt.asUintN(64, id) >> 56n === 0xffn) continue;
    return id;
  }
}

export class SessionTable<C> {
  private readonly byId = new Map<bigint, Session<C>>();

  /**
   * `passwordOf` derives a session's password from its id (ZooKeeper's scheme, for sessions that
   * outlive the process, see storage/session-password.ts); without it passwords are random.
   */
  constructor(private readonly passwordOf?: (id: bigint) => Buffer) {}

  get size(): number {
    return this.byId.size;
  }

  create(timeoutMs: number): Session<C> {
    let id = randomSessionId();
    while (this.byId.has(id)) id = randomSessionId();
    const s = new Session<C>(id, this.passwordOf?.(id) ?? take(16), timeoutMs);
    this.byId.set(id, s);
    return s;
  }

  /** Puts back a session read from storage (its password is derived, so `passwordOf` must be set). */
  restore(id: bigint, timeoutMs: number): Session<C> {
    const s = new Session<C>(id, this.passwordOf?.(id) ?? take(16), timeoutMs);
    this.byId.set(id, s);
    return s;
  }

  get(id: bigint): Session<C> | undefined {
    return this.byId.get(id);
  }

  /** The session when it is live and the password matches; undefined otherwise. */
  validate(id: bigint, passwd: Buffer): Session<C> | undefined {
    const s = this.byId.get(id);
    if (s === undefined || s.closing) return undefined;
    if (passwd.length !== s.passwd.length || !timingSafeEqual(passwd, s.passwd)) return undefined;
    return s;
  }

  delete(id: bigint): void {
    this.byId.delete(id);
  }

  [Symbol.iterator](): IterableIterator<Session<C>> {
    return this.byId.values();
  }

  clear(): void {
    this.byId.clear();
  }
}
