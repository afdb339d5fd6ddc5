/** Watch events as the client hands them to callbacks and persistent-watch iterators. */
import { EventType } from '@tenure/protocol';

export type WatchEventType =
  | 'NodeCreated'
  | 'NodeDeleted'
  | 'NodeDataChanged'
  | 'NodeChildrenChanged'
  | 'DataWatchRemoved'
  | 'ChildWatchRemoved'
  | 'PersistentWatchRemoved';

/** A change to a node. `path` is the node that changed, in the caller's namespace. */
export interface WatchEvent {
  type: WatchEventType;
  path: string;
  /** The zxid of the change, when the server reports it (ZooKeeper 3.9+, the embedded server). */
  zxid?: bigint;
}

/** The callback of a one-shot watch (the `watch` option of exists, getData and getChildren). */
export type WatchCallback = (event: WatchEvent) => void;

/**
 * Emitted by a persistent watch when events may have been missed: after LOST (a new session), and
 * after a reconnect when the server's zxid moved on while we were away. Re-read what you watch.
 */
export interface WatchResetEvent {
  type: 'reset';
  /** The watched path. */
  path: string;
  reason: 'LOST' | 'RECONNECTED';
}

export type PersistentWatchEvent = WatchEvent | WatchResetEvent;

const names: Record<number, WatchEventType> = {
  [EventType.NodeCreated]: 'NodeCreated',
  [EventType.NodeDeleted]: 'NodeDeleted',
  [EventType.NodeDataChanged]: 'NodeDataChanged',
  [EventType.NodeChildrenChanged]: 'NodeChildrenChanged',
  [EventType.DataWatchRemoved]: 'DataWatchRemoved',
  [EventType.ChildWatchRemoved]: 'ChildWatchRemoved',
  [EventType.PersistentWatchRemoved]: 'PersistentWatchRemoved',
};

export function eventTypeName(type: number): WatchEventType | undefined {
  return names[type];
}
