/**
 * DistributedIdQueue (Curator's): items in `<path>/queue-|<id>|<seq>`, the id with `/` and `|`
 * replaced by `_`. Consumers take them in sequence order (the name with `|<id>|` left out);
 * `remove(id)` deletes every item whose id is exactly `id` (through the item's lock node when the
 * queue has a lockPath, else with version 0, as Curator does). A failed item is re-queued under its
 * id. There is no putMulti.
 */
import {
  BadVersionError,
  CreateMode,
  NoNodeError,
  NodeExistsError,
  type Client,
  type WaitOptions,
  InvalidArgumentError,
} from '@tenure/client';
import { QueueBase, type QueueOptions } from './queue-base.js';

const SEPARATOR = '|';

/** The id in an item name: the text between the first and second `|` (the whole name if there are fewer). */
export function idOf(name: string): string {
  const start = name.indexOf(SEPARATOR);
  const end = start < 0 ? -1 : name.indexOf(SEPARATOR, start + 1);
  return end < 0 ? name : name.slice(start + 1, end);
}

/** The name with its `|<id>|` part left out: `queue-<seq>`. */
function withoutId(name: string): string {
  const start = name.indexOf(SEPARATOR);
  const end = start < 0 ? -1 : name.indexOf(SEPARATOR, start + 1);
  return end < 0 ? name : name.slice(0, start) + name.slice(end + 1);
}

/**
 * A distributed FIFO queue whose items carry an id, by which they can be removed.
 *
 * | node | mode | data |
 * |---|---|---|
 * | `<path>/queue-\|<id>\|<seq>` | PERSISTENT_SEQUENTIAL | ItemSerializer frame |
 * | `<lockPath>/<item name>` (with `lockPath`) | EPHEMERAL | empty |
 */
export class DistributedIdQueue<T = Buffer> extends QueueBase<T> {
  constructor(client: Client, path: string, options: QueueOptions<T> = {}) {
    if (path.includes(SEPARATOR)) throw new InvalidArgumentError(`DistributedIdQueue ${path}: the queue path must not contain '|'`);
    const sort = (children: readonly string[]): string[] =>
      children
        .filter((c) => c.startsWith('queue-'))
        .map((name) => ({ name, key: withoutId(name) }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map((e) => e.name);
    super(client, path, options, { sort }, 'DistributedIdQueue');
  }

  /** Adds `item` under `id` (non-empty). */
  put(item: T, id: string, options?: WaitOptions): Promise<string> {
    if (id.length === 0) throw new InvalidArgumentError('DistributedIdQueue: id must not be empty');
    return this.putFrame(`queue-${SEPARATOR}${id.replace(/[/|]/g, '_')}${SEPARATOR}`, [item], options, 'put');
  }

  /** Deletes every item whose id is exactly `id`; resolves to how many it deleted. */
  async remove(id: string): Promise<number> {
    this.checkStarted('remove');
    const { children } = await this.client.getChildren(this.path);
    let removed = 0;
    for (const name of children) {
      if (idOf(name) === id && (await this.tryRemove(name))) removed++;
    }
    return removed;
  }

  protected override requeueName(itemName: string): string {
    return `queue-${SEPARATOR}${idOf(itemName)}${SEPARATOR}`;
  }

  private async tryRemove(name: string): Promise<boolean> {
    const itemPath = `${this.path}/${name}`;
    const lockPath = this.lockPath;
    const lockNode = lockPath === undefined ? undefined : `${lockPath}/${name}`;
    try {
      if (lockNode !== undefined) await this.client.create(lockNode, null, { mode: CreateMode.EPHEMERAL });
    } catch (err) {
      if (err instanceof NodeExistsError) return false;
      throw err;
    }
    try {
      await this.client.delete(itemPath, { version: lockNode === undefined ? 0 : -1 });
      return true;
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof BadVersionError) return false;
      throw err;
    } finally {
      if (lockNode !== undefined) await this.client.delete(lockNode, { guaranteed: true }).catch(() => {});
    }
  }
}
