/**
 * PersistentNode: a node that stays in place through connection loss, session expiry, server
 * restarts and deletes by others, with Curator's semantics (Curator's PersistentNode) plus an
 * ownership rule for nodes found in our place.
 *
 * Protocol, all through the client's public API:
 * 1. Create `path` in `mode` (missing parents as containers when `useParentCreation`); with
 *    `protection` the name is `_c_<uuid>-<name>` and a lost reply is recovered by the client.
 * 2. Watch it: `exists(path, watch)`. NodeDeleted → create again. NodeDataChanged → watch again.
 * 3. Re-create under the name the first create gave: sequential modes are downgraded to their
 *    non-sequential form, so a protected sequential node keeps its uuid and its number.
 * 4. A node found in our place (NodeExists, or the check in 2) is judged by its ephemeralOwner:
 *    - this session's, or not an ephemeral: adopt it and write our data (Curator);
 *    - a previous session of this same client: delete it, then create ours;
 *    - another live session's (e.g. a duplicate member id): leave it, report `conflict`, retry
 *      with backoff and at once when its NodeDeleted arrives.
 * 5. RECONNECTED: check, and create again if needed. After LOST (our ephemeral died with the
 *    session; after an outage every member's did) wait a random jitter first, so a mass expiry
 *    does not become a herd of creates and watch notifications.
 * 6. NoAuth stops the node and is reported as an `error` event. Other failures are retried with
 *    backoff from the retry policy.
 * 7. With `replaceExisting`, the first create goes out without a check and replaces a node it
 *    finds (delete, create again), as Curator's ServiceDiscovery registers: one round trip when
 *    the path is free.
 * 8. close(): remove our watches, delete the node (a guaranteed delete); a create that completes
 *    after close is deleted too.
 */
import { EventEmitter } from 'eventemitter3';
import {
  BadVersionError,
  answerOf,
  ClosedError,
  ConnectionState,
  NoAuthError,
  NodeExistsError,
  NoNodeError,
  PassRunner,
  RecipeLifecycle,
  RetryPacer,
  newProtectedId,
  safeEmitter,
  triageFailure,
  type RecipeState,
  type SafeEmit,
  protectedPrefix,
  type Client,
  type CreateMode,
  type Logger,
  type NodeData,
  type Stat,
  type WaitOptions,
  type WatchEvent,
  InvalidArgumentError,
} from '@tenure/client';
import { isEphemeralMode, joinPath, nodeName, nonSequentialMode, parentPath } from '@tenure/protocol';
import { NodeConflictError } from './errors.js';
import { judgeOwnership, sessionOwner } from './node-ownership.js';
import {
  nodeSettings,
  toBuffer,
  type NodeSettings,
  type PersistentNodeEvents,
  type PersistentNodeOptions,
} from './persistent-node-options.js';

/**
 * A node that heals itself. Creates one node at `path` (or `_c_<uuid>-<name><seq>` with protection
 * and a sequential mode), plus missing parents as containers.
 *
 * ```ts
 * await using node = new PersistentNode(client, { path: '/services/api/host-1', data: 'http://...' });
 * await node.start();
 * await node.waitForInitialCreate({ timeoutMs: 5000 });
 * ```
 */
export class PersistentNode extends EventEmitter<PersistentNodeEvents> {
  readonly basePath: string;
  readonly mode: CreateMode;
  readonly protection: boolean;
  private readonly settings: NodeSettings;
  /** Our view of the client: every watch we set goes through it, and close takes them all back. */
  private readonly client: Client;
  private readonly log: Logger;
  private readonly runner: PassRunner;
  private readonly life: RecipeLifecycle;
  private readonly pacer: RetryPacer;
  private readonly emitSafely: SafeEmit<PersistentNodeEvents>;
  private data: Buffer;
  /** Bumped by setData; `written` is the generation the server has. */
  private dataGen = 0;
  private written = -1;
  /** The path we keep, once known (the first create's, or `path` for non-sequential unprotected modes). */
  private nodePath: string | undefined;
  /** actualPath is public once we have held the node. */
  private held = false;
  /** We believe our node exists now. */
  private present = false;
  private stoppedBy: Error | null = null;
  /** LOST seen and no new session yet: creating now is pointless. */
  private sessionLost = false;
  /** No create before this clock time (the jitter after LOST). */
  private notBefore = 0;
  /**
   * `replaceExisting`: 'first' until the first create answered (created, or NodeExists: delete,
   * then 'again': one more create without a check). null: the ownership rule.
   */
  private replace: 'first' | 'again' | null;
  /** The first create (or adoption), or what ended the node before it; `initialEnd` once settled. */
  private readonly initial: Promise<void>;
  private endInitial!: (error: Error | null) => void;
  private initialEnd: Error | null | undefined;

  constructor(client: Client, options: PersistentNodeOptions) {
    super();
    if (!client || typeof client.create !== 'function') throw new InvalidArgumentError('PersistentNode: a client is required');
    const settings = (this.settings = nodeSettings(options));
    this.basePath = settings.path;
    this.mode = settings.mode;
    this.protection = settings.protection;
    this.client = client.trackingWatches();
    this.log = settings.logger ?? client.childLogger({ recipe: 'persistentNode', path: settings.path });
    this.life = new RecipeLifecycle(`PersistentNode ${settings.path}`);
    this.pacer = new RetryPacer(client, settings.retryPolicy);
    this.emitSafely = safeEmitter<PersistentNodeEvents>(this, this.log);
    this.runner = new PassRunner(
      client.clock,
      () => this.pass(),
      (err) => this.failed(err),
    );
    this.data = toBuffer(options.data);
    this.replace = settings.replaceExisting ? 'first' : null;
    // Unprotected non-sequential nodes have their name from the start.
    if (!this.protection && nonSequentialMode(this.mode) === this.mode) this.nodePath = this.basePath;
    this.initial = new Promise((resolve, reject) => {
      this.endInitial = (error) => {
        if (this.initialEnd !== undefined) return;
        this.initialEnd = error;
        if (error) reject(error);
        else resolve();
      };
    });
    this.initial.catch(() => {}); // waiting for it is optional
  }

  /** The node's full path (protection prefix and sequence number included); undefined until the first create. */
  get actualPath(): string | undefined {
    return this.held ? this.nodePath : undefined;
  }

  /** Whether the node is believed to exist now (it was created or adopted, and no delete or LOST was seen since). */
  get isPresent(): boolean {
    return this.present;
  }

  /** `'latent'` before start(), `'started'`, then `'closed'` (the recipe lifecycle). */
  get state(): RecipeState {
    return this.life.state;
  }

  /**
   * Starts keeping the node: the first create is issued now (see `waitForInitialCreate`). Rejects
   * with IllegalStateError if started or closed before, ClosedError if the client is closed.
   */
  start(): Promise<void> {
    return this.life.start(
      () => {
        this.client.on('stateChanged', this.onState);
        this.client.closedSignal.addEventListener('abort', this.onClientClosed, { once: true });
        this.runner.run();
      },
      () => this.checkClientOpen(),
    );
  }

  private checkClientOpen(): void {
    if (this.client.closedSignal.aborted) throw new ClosedError('client');
  }

  /**
   * Resolves once the node was first created (or adopted). Rejects with TimeoutError after
   * `timeoutMs`, AbortError, ClosedError if it or the client closed first, or the NoAuthError that
   * stopped it. Once settled, it answers with that outcome at once.
   */
  waitForInitialCreate(options?: WaitOptions): Promise<void> {
    if (this.initialEnd !== undefined) return this.initial;
    return this.client.wait(this.initial, options, `PersistentNode ${this.basePath}: initial create`);
  }

  /** Our data (what we write on every create). */
  getData(): Buffer {
    return this.data;
  }

  /**
   * Sets our data: written now if the node is in place, otherwise with the next create. Resolves
   * once written (or kept for the next create); a failed write is retried by the next check.
   */
  async setData(data: NodeData | null): Promise<void> {
    if (this.life.isClosed) throw new ClosedError(`PersistentNode ${this.basePath}`);
    this.data = toBuffer(data);
    const gen = ++this.dataGen;
    if (!this.life.isStarted || !this.present || this.nodePath === undefined) return;
    try {
      await this.client.setData(this.nodePath, this.data);
      if (this.written < gen) this.written = gen;
    } catch (err) {
      // The next check (watch, reconnect) writes it; a missing node is re-created with it.
      if (!(err instanceof NoNodeError)) this.runner.run();
      if (err instanceof NoAuthError) throw err;
    }
  }

  /**
   * Stops keeping the node and deletes it (guaranteed delete). Waits for an operation in flight, so
   * that a create completing now is deleted too. Removes our watches from the server.
   */
  close(): Promise<void> {
    return this.life.close((wasStarted) => {
      this.runner.stop();
      this.client.off('stateChanged', this.onState);
      this.client.closedSignal.removeEventListener('abort', this.onClientClosed);
      this.endInitial(new ClosedError(`PersistentNode ${this.basePath}`));
      return wasStarted ? this.release() : undefined;
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- the loop ----

  private get active(): boolean {
    return this.life.isStarted && this.stoppedBy === null;
  }

  /** One pass: make sure our node exists and is watched. */
  private async pass(): Promise<void> {
    if (this.sessionLost) return; // RECONNECTED triggers us
    const wait = this.notBefore - this.client.clock.now();
    if (wait > 0) return this.schedule(wait);
    // Each round either settles or changes something (a stale node deleted, a node created).
    for (let round = 0; round < 8 && this.active; round++) {
      const path = this.nodePath;
      if (path !== undefined && this.replace === null) {
        const stat = await this.client.exists(path, { watch: this.onWatch });
        if (!this.active) return;
        if (stat !== null) {
          const verdict = judgeOwnership(stat, this.client.sessionId, this.client.previousSessionIds);
          if (verdict === 'ours') return this.settle(path, stat);
          if (verdict === 'foreign') return this.conflict(path, stat);
          await this.deleteStale(path, stat);
          continue;
        }
        this.lost(path);
      }
      if (await this.create()) continue;
      return;
    }
    this.schedule(this.backoff());
  }

  /** One create. Returns true when the pass should check again (created, or found a node in the way). */
  private async create(): Promise<boolean> {
    const known = this.nodePath;
    const gen = this.dataGen;
    // A known name is created as is: non-sequential, unprotected (the uuid is already in the name,
    // and a lost reply shows up as NodeExists owned by this session).
    const mode = known !== undefined ? nonSequentialMode(this.mode) : this.mode;
    const target = known ?? this.basePath;
    const protectedId = known === undefined && this.protection ? newProtectedId() : undefined;
    const { ttlMs, acl, useParentCreation } = this.settings;
    try {
      const r = await this.client.create(target, this.data, {
        mode,
        ttlMs,
        acl,
        createParentContainers: useParentCreation,
        protection: protectedId,
      });
      if (!this.active) {
        await this.client.delete(r.path, { guaranteed: true }).catch(() => {});
        return false;
      }
      this.replace = null;
      this.nodePath = r.path;
      this.written = Math.max(this.written, gen);
      this.markPresent(r.path);
      return true; // the check sets the watch (and writes data set meanwhile)
    } catch (err) {
      // NodeExists, true or left by our own lost reply (OutcomeUnknownError): the check judges whose it is.
      if (!(answerOf(err) instanceof NodeExistsError)) throw err; // a retry creates again (replace kept)
      if (this.replace === 'first') return this.replaceFound(target);
      this.replace = null;
      // Only a fixed name can be in the way (protected names are new, sequential ones unique).
      this.nodePath = protectedId !== undefined ? joinPath(parentPath(target), protectedPrefix(protectedId) + nodeName(target)) : target;
      return true;
    }
  }

  /** `replaceExisting`: delete what the first create found (so watchers fire), then create once more. */
  private async replaceFound(path: string): Promise<boolean> {
    this.replace = 'again';
    try {
      await this.client.delete(path, { retryAmbiguousWrites: 'raw' }); // gone is what is wanted
    } catch (err) {
      if (!(err instanceof NoNodeError)) {
        this.replace = null; // e.g. NotEmpty, NoAuth: the ownership rule judges it next time
        throw err;
      }
    }
    return true;
  }

  /** The node at `path` is ours: watch set, data written if needed, initial create done. */
  private async settle(path: string, stat: Stat): Promise<void> {
    const adopted = !this.present;
    if (this.written < this.dataGen || adopted) {
      // Adopting a node (Curator writes our data over it), or a setData that did not land.
      const gen = this.dataGen;
      try {
        await this.client.setData(path, this.data, { version: adopted ? -1 : stat.version });
        this.written = Math.max(this.written, gen);
      } catch (err) {
        // Refused, or unknown after a lost reply: the next check reads the node again.
        const answer = answerOf(err);
        if (answer instanceof NoNodeError || answer instanceof BadVersionError) {
          this.runner.run(); // once more
          return;
        }
        throw err;
      }
      if (!this.active) return;
    }
    this.pacer.succeeded();
    if (adopted) this.markPresent(path);
  }

  private markPresent(path: string): void {
    const was = this.present;
    this.present = true;
    this.held = true;
    this.pacer.succeeded();
    if (!was) {
      this.log.debug({ node: path }, 'node in place');
      this.emitSafely('created', path);
    }
    this.endInitial(null);
  }

  private lost(path: string): void {
    if (!this.present) return;
    this.present = false;
    this.emitSafely('deleted', path);
  }

  /** An ephemeral of one of our previous sessions: the old incarnation, delete it. */
  private async deleteStale(path: string, stat: Stat): Promise<void> {
    this.lost(path);
    try {
      await this.client.delete(path, { version: stat.version, retryAmbiguousWrites: 'raw' }); // gone, or changed: either will do
    } catch (err) {
      if (!(err instanceof NoNodeError) && !(err instanceof BadVersionError)) throw err;
    }
  }

  private conflict(path: string, stat: Stat): void {
    this.lost(path);
    const err = new NodeConflictError(path, sessionOwner(stat));
    this.log.warn({ node: path, owner: err.owner }, 'an ephemeral of another live session is in our place');
    this.emitSafely('conflict', err);
    this.emitSafely('error', err);
    // Our exists watch is on the node: its NodeDeleted triggers us at once; this is the fallback.
    this.schedule(this.backoff());
  }

  private failed(err: unknown): void {
    const verdict = triageFailure(err, this.client.closedSignal);
    if (!this.active || verdict === 'closed') return;
    if (verdict === 'stop') {
      const noAuth = err as Error;
      this.log.error({ err }, 'NoAuth: the node stops');
      this.stoppedBy = noAuth;
      this.runner.stop();
      this.endInitial(noAuth);
      this.emitSafely('error', noAuth);
      return;
    }
    // Connection trouble and session loss heal by themselves (RECONNECTED triggers us); say the rest.
    if (verdict === 'report' && err instanceof Error) this.emitSafely('error', err);
    const ms = this.backoff();
    this.log.debug({ err, retryInMs: ms }, 'retrying');
    this.schedule(ms);
  }

  private backoff(): number {
    return this.pacer.nextDelayMs();
  }

  private schedule(ms: number): void {
    if (this.active) this.runner.runIn(ms);
  }

  private readonly onWatch = (event: WatchEvent): void => {
    if (!this.active) return;
    if (event.type === 'NodeDeleted') {
      if (event.path === this.nodePath) this.lost(event.path);
      this.runner.run();
    } else if (event.type === 'NodeCreated' || event.type === 'NodeDataChanged') {
      this.runner.run(); // re-arm the watch (and judge a node that appeared)
    }
  };

  private readonly onState = (state: ConnectionState): void => {
    if (!this.active) return;
    if (state === ConnectionState.LOST) {
      this.sessionLost = true;
      // Our ephemeral died with the session (the server may hold it a little longer; the ownership
      // rule deletes it then).
      if (isEphemeralMode(this.mode) && this.nodePath !== undefined) this.lost(this.nodePath);
    } else if (state === ConnectionState.RECONNECTED || state === ConnectionState.CONNECTED) {
      if (this.sessionLost) {
        this.sessionLost = false;
        this.notBefore = this.client.clock.now() + Math.random() * this.settings.rejoinJitterMs;
      }
      this.runner.run();
    }
  };

  /** The client closed: nothing can run any more; no retry stays scheduled. */
  private readonly onClientClosed = (): void => this.runner.stop();

  // ---- close ----

  private async release(): Promise<void> {
    const client = this.client;
    // A create in flight completes, then sees we are closed and deletes its node.
    await this.runner.whenIdle();
    await client.removeAllWatches();
    const path = this.nodePath;
    if (!this.settings.deleteOnClose || path === undefined || client.closedSignal.aborted) return;
    if (this.present) {
      await client.delete(path, { guaranteed: true }).catch(() => {});
    } else if (isEphemeralMode(this.mode)) {
      // A create whose reply we never got may have left our ephemeral.
      const stat = await client.exists(path).catch(() => null);
      if (stat !== null && sessionOwner(stat) !== 0n && judgeOwnership(stat, client.sessionId, client.previousSessionIds) !== 'foreign') {
        await client.delete(path, { version: stat.version, guaranteed: true }).catch(() => {});
      }
    }
    this.present = false;
  }
}
