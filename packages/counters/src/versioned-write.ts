/**
 * One conditional write whose outcome is never guessed.
 *
 * The client retries a request on connection loss. A setData(version v) that the server applied,
 * whose reply was lost, comes back from its retry as BadVersion; a create, as NodeExists. So a
 * conflict reported while a connection went (SUSPENDED or LOST during the call) may be our own
 * write. Then, and when the write fails with anything but the server's refusal, we sync and read
 * the node again: only a node still at the version (and incarnation, czxid) we read proves that
 * our write did not land. Anything else is an OutcomeUnknownError. A read-back of the value proves
 * nothing: two writers that read the same value write the same next value.
 *
 * A create that landed and was then deleted by someone else looks as if it never landed: a
 * counter deleted under its users is reset anyway.
 */
import {
  BadVersionError,
  ConnectionState,
  KeeperError,
  NoNodeError,
  NodeExistsError,
  triageFailure,
  type Client,
  type Stat,
} from '@tenure/client';
import { OutcomeUnknownError } from './errors.js';

/** The node as we read it before writing: its version and czxid, or null when it was missing. */
export type ReadMark = { readonly version: number; readonly czxid: bigint } | null;

export type WriteOutcome =
  | { kind: 'written'; stat: Stat }
  /** Someone else wrote first; ours did not land. */
  | { kind: 'conflict' }
  /** The connection went, and the unchanged node proves ours did not land. */
  | { kind: 'not-landed' };

/** Counts the connections a client lost (SUSPENDED, LOST) while someone listens. */
export class ConnectionDrops {
  private n = 0;
  private listening = false;
  private readonly onState = (s: ConnectionState): void => {
    if (s === ConnectionState.SUSPENDED || s === ConnectionState.LOST) this.n++;
  };

  constructor(private readonly client: Client) {}

  get count(): number {
    if (!this.listening) {
      this.listening = true;
      this.client.on('stateChanged', this.onState);
    }
    return this.n;
  }

  close(): void {
    if (this.listening) this.client.off('stateChanged', this.onState);
    this.listening = false;
  }
}

const isConflict = (err: unknown): boolean =>
  err instanceof BadVersionError || err instanceof NoNodeError || err instanceof NodeExistsError;
/** The server answered no: nothing was written. */
const isRefusal = (err: unknown): boolean => {
  const verdict = triageFailure(err);
  return err instanceof KeeperError && (verdict === 'stop' || verdict === 'report');
};

/** Runs `write` (a create when `read` is null, else a setData) and says what became of it. */
export async function versionedWrite(
  client: Client,
  drops: ConnectionDrops,
  path: string,
  read: ReadMark,
  write: () => Promise<Stat>,
  operation: string,
): Promise<WriteOutcome> {
  const before = drops.count;
  try {
    return { kind: 'written', stat: await write() };
  } catch (thrown) {
    // The client could not prove what became of it: the counter's own check below decides, with the client's cause.
    const err = thrown instanceof OutcomeUnknownError ? thrown.cause : thrown;
    const dropped = drops.count !== before || thrown instanceof OutcomeUnknownError;
    if (!dropped && isConflict(err)) return { kind: 'conflict' };
    if (!dropped && isRefusal(err)) throw err;
    let unchanged: boolean;
    try {
      unchanged = await stillAsRead(client, path, read);
    } catch {
      throw new OutcomeUnknownError(operation, path, err);
    }
    if (unchanged) return { kind: 'not-landed' };
    throw new OutcomeUnknownError(operation, path, err);
  }
}

async function stillAsRead(client: Client, path: string, read: ReadMark): Promise<boolean> {
  // The server we read from must have seen everything the leader committed before it answers.
  await client.sync(path);
  const stat = await client.exists(path);
  if (read === null) return stat === null;
  return stat !== null && stat.version === read.version && stat.czxid === read.czxid;
}
