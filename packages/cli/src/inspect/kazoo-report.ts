/**
 * What an inspection reports of kazoo's recipes (kazoo-layouts.ts): SetPartitioner partitions and
 * timed leases (NonBlockingLease, MultiNonBlockingLease), kazoo's or Tenure's. Plain JSON-ready
 * data, as the rest of report.ts.
 */
import type { DataView } from './report.js';

/** A member of a partitioner's party (kazoo's ShallowParty: `<uuid hex>-<identifier>`). */
export interface PartitionMember {
  /** Its identifier: the node name after the first `-`. */
  readonly id: string;
  /** Its party node's full path. */
  readonly path: string;
  /** The session that owns the party node, hex. */
  readonly sessionId: string;
}

/** Who holds one item of a partitioned set: the first contender of kazoo's Lock at `<path>/locks/<item>`. */
export interface PartitionHolder {
  /** The member whose session owns the lock node, else the lock node's data (Tenure writes the identifier; kazoo's partitioner writes none), else null. */
  readonly memberId: string | null;
  readonly sessionId: string;
  /** The lock node's name. */
  readonly node: string;
  readonly data: DataView;
  /** Its czxid (decimal), the lock's fencing token. */
  readonly fencingToken: string;
  /** Now minus the lock node's ctime: an upper bound on how long it has been held. */
  readonly heldForMs: number;
}

export interface PartitionItem {
  readonly item: string;
  /** null: nobody holds it now (a re-split under way, or nobody's share). */
  readonly holder: PartitionHolder | null;
  /** Contenders queued behind the holder. */
  readonly waiting: number;
}

/** A kazoo SetPartitioner: `<path>/party` and `<path>/locks/<item>`. */
export interface PartitionInfo {
  readonly path: string;
  /** By identifier. */
  readonly members: readonly PartitionMember[];
  /** Every item with a lock folder, by item name. */
  readonly items: readonly PartitionItem[];
}

/** A timed lease: kazoo's record `<path>/lease_holder`. */
export interface TimedLeaseInfo {
  /** The lease's path (for a MultiNonBlockingLease, one of its `<path>/<n>`). */
  readonly path: string;
  readonly holder: string;
  /** The record's version (kazoo writes 1). */
  readonly version: unknown;
  /** When the holder's period ends (ms since the epoch, from the writer's clock), or null when the record has no end we read. */
  readonly endsAt: number | null;
  /** endsAt minus the report's `at`, at least 0 (skewed by the difference of the two clocks); null without an end. */
  readonly timeLeftMs: number | null;
  /** The period is still running at the report's `at`. */
  readonly running: boolean;
}
