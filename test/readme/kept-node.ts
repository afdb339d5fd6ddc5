/**
 * KeptNode: the client README's "Writing a recipe" second example, a recipe with a lifecycle on the
 * whole kit (RecipeLifecycle, PassRunner, RetryPacer, safeEmitter, triageFailure).
 * test/readme/writing-a-recipe.test.ts runs it and checks that the README shows this file.
 */
import { EventEmitter } from 'eventemitter3';
import { CreateMode, NodeExistsError, PassRunner, RecipeLifecycle, RetryPacer, asError, safeEmitter, triageFailure } from '@tenure/client';
import type { Client } from '@tenure/client';

type KeptNodeEvents = { created(path: string): void; error(error: Error): void };

/** Keeps an ephemeral node at `path`: created by start(), again whenever it goes, deleted by close(). */
export class KeptNode extends EventEmitter<KeptNodeEvents> implements AsyncDisposable {
  private readonly life: RecipeLifecycle;
  private readonly client: Client;
  private readonly runner: PassRunner;
  private readonly pacer: RetryPacer;
  private readonly emitSafely = safeEmitter<KeptNodeEvents>(this);

  constructor(
    client: Client,
    readonly path: string,
  ) {
    super();
    this.life = new RecipeLifecycle(`KeptNode ${path}`);
    this.client = client.trackingWatches();
    this.pacer = new RetryPacer(client);
    this.runner = new PassRunner(
      client.clock,
      () => this.pass(),
      (err) => this.failed(err),
    );
  }

  get state(): RecipeLifecycle['state'] {
    return this.life.state;
  }

  start(): Promise<void> {
    return this.life.start(() => void this.runner.run());
  }

  close(): Promise<void> {
    return this.life.close(async () => {
      this.runner.stop();
      this.pacer.cancel();
      await this.runner.whenIdle();
      await this.client.removeAllWatches();
      await this.client.delete(this.path, { guaranteed: true }).catch(() => {});
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** One pass: create the node if it is missing, and watch it. A watch event runs the pass once more. */
  private async pass(): Promise<void> {
    try {
      await this.client.create(this.path, null, { mode: CreateMode.EPHEMERAL, createParentContainers: true });
      this.emitSafely('created', this.path);
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
    if ((await this.client.exists(this.path, { watch: () => this.runner.run() })) === null) this.runner.run();
    this.pacer.succeeded();
  }

  private failed(err: unknown): void {
    const verdict = triageFailure(err, this.client.closedSignal);
    if (verdict === 'closed' || !this.life.isStarted) return;
    if (verdict === 'stop' || verdict === 'report') this.emitSafely('error', asError(err));
    if (verdict !== 'stop') this.pacer.schedule(() => this.runner.run());
  }
}
