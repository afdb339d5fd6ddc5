/**
 * `node.watch()`: an async iterable of a model node's values, as they change.
 *
 * Protocol:
 * 1. Read the node with a data watch (getData), or, when it is missing, set an exists watch.
 * 2. Yield what was read if it differs from what was yielded last (another czxid or mzxid, or the
 *    node came or went): `{ value, stat }`, checked by the schema, or `undefined` for no node. The
 *    first read is always yielded.
 * 3. A watch event, and RECONNECTED after a LOST session, run 1 again (one read at a time, once
 *    more when asked meanwhile); only a real change is yielded.
 * 4. A failed read is retried with the retry policy's backoff (the kit's failure rule); NoAuth,
 *    and a node that fails its schema (ModelValidationError with the path), end the iteration by
 *    throwing.
 * 5. It ends on `close()`, on `break` out of the loop, on `signal`; the client's close ends it
 *    with ClosedError. Every watch it set goes through a `trackingWatches()` view and is removed
 *    then, on the server too.
 */
import {
  ClosedError,
  ConnectionState,
  NoNodeError,
  PassRunner,
  RetryPacer,
  asError,
  triageFailure,
  type Client,
  type Stat,
  type WatchEvent,
} from '@tenure/client';
import { ValueStream, type ValueIterator } from './value-stream.js';

/** A model node's value with its Stat. */
export interface ModelSnapshot<V> {
  readonly value: V;
  readonly stat: Stat;
}

export interface ModelWatchOptions {
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
}

/** What the node passes: the model's compression setting for its reads. */
interface WatchReads extends ModelWatchOptions {
  decompressed?: boolean;
}

export class ModelWatch<V> implements AsyncIterableIterator<ModelSnapshot<V> | undefined>, AsyncDisposable {
  private readonly view: Client;
  private readonly runner: PassRunner;
  private readonly pacer: RetryPacer;
  private readonly stream = new ValueStream<ModelSnapshot<V> | undefined>();
  private readonly iterator: ValueIterator<ModelSnapshot<V> | undefined>;
  /** czxid:mzxid of what was yielded last, '-' for no node; undefined before the first read. */
  private last: string | undefined;
  private sessionLost = false;
  private closing: Promise<void> | undefined;
  private readonly reads: { decompressed?: boolean };

  constructor(
    client: Client,
    readonly path: string,
    private readonly decode: (bytes: Uint8Array, path: string) => Promise<V>,
    options: WatchReads = {},
  ) {
    this.reads = options.decompressed === undefined ? {} : { decompressed: options.decompressed };
    this.view = client.trackingWatches();
    this.pacer = new RetryPacer(client);
    this.runner = new PassRunner(
      client.clock,
      () => this.pass(),
      (err) => this.failed(err),
    );
    this.iterator = this.stream.subscribe(options.signal, () => this.endWith(() => {}));
    if (this.closing) return; // the signal was aborted already
    if (this.view.closedSignal.aborted) this.onClientClosed();
    else {
      this.view.closedSignal.addEventListener('abort', this.onClientClosed, { once: true });
      this.view.on('stateChanged', this.onState);
      this.runner.run();
    }
  }

  next(): Promise<IteratorResult<ModelSnapshot<V> | undefined>> {
    return this.iterator.next();
  }

  /** Leaving a `for await` loop closes the watch. */
  async return(): Promise<IteratorResult<ModelSnapshot<V> | undefined>> {
    await this.close();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Stops watching: the iteration ends, and every watch set is removed, on the server too. Idempotent. */
  close(): Promise<void> {
    return this.shut(() => this.stream.end());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Watches still set on the server for this iteration (0 once closed). */
  get trackedWatchCount(): number {
    return this.view.trackedWatchCount;
  }

  /** Closes once; `finish` ends the iteration (quietly, or with an error) after `closing` is set. */
  private shut(finish: () => void): Promise<void> {
    if (!this.closing) {
      this.closing = this.shutDown();
      finish();
    }
    return this.closing;
  }

  /** shut() from a callback: it cannot fail (watch removal failures are swallowed). */
  private endWith(finish: () => void): void {
    this.shut(finish).catch(() => {});
  }

  private async shutDown(): Promise<void> {
    this.runner.stop();
    this.pacer.cancel();
    this.view.off('stateChanged', this.onState);
    this.view.closedSignal.removeEventListener('abort', this.onClientClosed);
    await this.runner.whenIdle();
    if (!this.view.closedSignal.aborted) await this.view.removeAllWatches().catch(() => {});
  }

  private readonly onWatch = (event: WatchEvent): void => {
    if (!event.type.endsWith('Removed')) this.runner.run();
  };

  private readonly onState = (state: ConnectionState): void => {
    if (state === ConnectionState.LOST) this.sessionLost = true;
    else if (state === ConnectionState.RECONNECTED && this.sessionLost) {
      this.sessionLost = false;
      this.runner.run();
    }
  };

  private readonly onClientClosed = (): void => {
    this.endWith(() => this.stream.fail(new ClosedError(`client (watching ${this.path})`)));
  };

  private async pass(): Promise<void> {
    if (this.closing) return;
    let read: { data: Buffer; stat: Stat } | null;
    try {
      read = await this.view.getData(this.path, { watch: this.onWatch, ...this.reads });
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      const stat = await this.view.exists(this.path, { watch: this.onWatch });
      if (stat !== null) return void this.runner.run(); // created meanwhile: read it
      read = null;
    }
    this.pacer.succeeded();
    const key = read ? `${read.stat.czxid}:${read.stat.mzxid}` : '-';
    if (key === this.last || this.closing) return;
    this.last = key;
    if (read === null) return this.stream.push(undefined);
    let value: V;
    try {
      value = await this.decode(read.data, this.path);
    } catch (err) {
      this.endWith(() => this.stream.fail(asError(err)));
      return;
    }
    if (!this.closing) this.stream.push({ value, stat: read.stat });
  }

  private failed(err: unknown): void {
    if (this.closing) return;
    const verdict = triageFailure(err, this.view.closedSignal);
    if (verdict === 'closed') return this.onClientClosed();
    if (verdict === 'stop') {
      this.endWith(() => this.stream.fail(asError(err)));
      return;
    }
    this.pacer.schedule(() => this.runner.run());
  }
}
