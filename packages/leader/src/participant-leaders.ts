/**
 * The leaders of a participant's election (`latch.leaders()`, `selector.leaders()`): a
 * LeaderObserver on the same path, made at the first call and closed with the participant. A
 * participant watches only its predecessor; the observer's children watch exists only for as long
 * as someone asked for the leaders.
 */
import type { Client, Logger } from '@tenure/client';
import { LeaderObserver, type ElectionRecipe, type LeaderInfo } from './leader-observer.js';
import { LeaderStream } from './leader-stream.js';

export class ParticipantLeaders {
  private observer: LeaderObserver | null = null;
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly path: string,
    private readonly recipe: ElectionRecipe,
    private readonly logger: Logger,
    private readonly onError: (err: Error) => void,
  ) {}

  leaders(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<LeaderInfo> {
    if (this.closed) {
      const ended = new LeaderStream<LeaderInfo>();
      ended.end();
      return ended.subscribe();
    }
    if (this.observer === null) {
      const observer = new LeaderObserver(this.client, this.path, { recipe: this.recipe, logger: this.logger, listed: false });
      observer.on('error', this.onError);
      this.observer = observer;
      // Its failures reach the iterators (ClosedError, NoAuth) and `error`.
      observer.start().catch(() => {});
    }
    return this.observer.leaders(options);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.observer?.close();
  }
}
