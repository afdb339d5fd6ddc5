/**
 * AtomicLong and AtomicInteger: Curator's DistributedAtomicLong (8 bytes, a bigint here) and
 * DistributedAtomicInteger (4 bytes, a number), over the engine in atomic-value.ts, whose header
 * has the node and the protocol. Arithmetic wraps around as Java's long and int do.
 */
import type { Client } from '@tenure/client';
import { AtomicValue, type AtomicOptions, type AtomicResult } from './atomic-value.js';
import { int32, int64, type FixedCodec } from './codecs.js';

/** The operations both share; T is bigint for AtomicLong, number for AtomicInteger. */
abstract class AtomicNumber<T> implements AsyncDisposable {
  private readonly engine: AtomicValue<T>;

  protected constructor(
    client: Client,
    readonly path: string,
    private readonly codec: FixedCodec<T>,
    private readonly one: T,
    private readonly negate: (v: T) => T,
    options?: AtomicOptions,
  ) {
    this.engine = new AtomicValue(client, path, codec, options);
  }

  /** The current value; a missing node is 0. */
  async get(): Promise<AtomicResult<T>> {
    return this.engine.get();
  }
  async increment(): Promise<AtomicResult<T>> {
    return this.change('increment', this.one);
  }
  async decrement(): Promise<AtomicResult<T>> {
    return this.change('decrement', this.negate(this.one));
  }
  async add(delta: T): Promise<AtomicResult<T>> {
    return this.change('add', this.codec.check(delta, 'delta'));
  }
  async subtract(delta: T): Promise<AtomicResult<T>> {
    return this.change('subtract', this.negate(this.codec.check(delta, 'delta')));
  }
  /** Sets `next` if the value is `expected` (byte for byte: an empty node is not 0). One attempt, no lock. */
  async compareAndSet(expected: T, next: T): Promise<AtomicResult<T>> {
    return this.engine.compareAndSet(expected, next);
  }
  /** Sets `value` like an update: optimistic, then under the promoted lock. */
  async trySet(value: T): Promise<AtomicResult<T>> {
    const v = this.codec.check(value, 'the value');
    return this.engine.update('trySet', () => v);
  }
  /** Sets `value` unconditionally. */
  async forceSet(value: T): Promise<AtomicResult<T>> {
    return this.engine.forceSet(value);
  }
  /** Creates the node with `value`; `succeeded: false` if it exists. */
  async initialize(value: T): Promise<AtomicResult<T>> {
    return this.engine.initialize(value);
  }
  close(): Promise<void> {
    return this.engine.close();
  }
  private async change(operation: string, delta: T): Promise<AtomicResult<T>> {
    return this.engine.update(operation, (v) => this.codec.add(v, delta));
  }
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Curator's DistributedAtomicLong: a 64-bit counter as a bigint. */
export class AtomicLong extends AtomicNumber<bigint> {
  constructor(client: Client, path: string, options?: AtomicOptions) {
    super(client, path, int64, 1n, (v) => BigInt.asIntN(64, -v), options);
  }
}

/** Curator's DistributedAtomicInteger: a 32-bit counter as a number. */
export class AtomicInteger extends AtomicNumber<number> {
  constructor(client: Client, path: string, options?: AtomicOptions) {
    super(client, path, int32, 1, (v) => -v | 0, options);
  }
}
