/**
 * What an observer inspection returns (election-observers.ts): plain, JSON-ready objects, shared
 * with the page as report.ts is. Session ids are hex as ZooKeeper prints them.
 */
import type { ElectionInfo } from './report.js';

/** A session watching an election's path without taking part. */
export interface ElectionObserver {
  /** hex, as ZooKeeper prints it. */
  readonly sessionId: string;
  /** The server (`host:port` of the connect string) whose listing showed the watch. */
  readonly server: string;
}

/** The observers of one election of the report. */
export interface ObservedElection {
  readonly path: string;
  readonly kind: ElectionInfo['kind'];
  readonly observers: readonly ElectionObserver[];
}

export interface ObserversReport {
  /**
   * `four-letter-words`: `wchp` answered on at least one server (elections no server lists have
   * no observers). `unavailable`: no server answered it; observers cannot be known.
   */
  readonly source: 'four-letter-words' | 'unavailable';
  /** Every election of the report, in its order, with its observers. */
  readonly elections: readonly ObservedElection[];
  /** Per server, why `wchp` could not be used (not whitelisted, unreachable, no TCP server). */
  readonly problems: readonly { readonly server: string; readonly reason: string }[];
}
