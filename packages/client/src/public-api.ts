/**
 * Everything @tenure/client exports except createClient, shared by the Node entry (index.ts) and
 * the browser entry (browser.ts). No module reached from here imports `node:` or @tenure/zookeeper
 * (test/browser/browser-entries.test.ts bundles the browser entry to check).
 */
export {
  Client,
  type AddWatchOptions,
  type CreateOptions,
  type CreateResult,
  type DeleteOptions,
  type MultiReadOp,
  type MultiReadResult,
  type OperationOptions,
  type RemoveWatchesOptions,
  type VersionOptions,
  type SetDataOptions,
  type GetDataOptions,
  type WatchOptions,
} from './client.js';
export { WaitScope, typedReason, type WaitOptions, type WaitScopeDeps } from './wait-scope.js';
// The recipe kit: one lifecycle, one "run once more" pass runner, one retry pacer, one safe emit, one failure rule.
export { RecipeLifecycle, type RecipeState, type RecipeHandle } from './kit/recipe-lifecycle.js';
export { PassRunner } from './kit/pass-runner.js';
export { RetryPacer, type PacerDeps } from './kit/retry-pacer.js';
export { safeEmitter, type SafeEmit, type Emitting } from './kit/safe-emit.js';
export { triageFailure, type FailureVerdict } from './kit/failure-triage.js';
export {
  sequenceAfter,
  sortBySequence,
  queuePosition,
  watchNode,
  waitForPredecessor,
  abandonNode,
  type QueuePosition,
  type NodeWatch,
  type AbandonOptions,
} from './sequence-queue.js';
export {
  REQUEST_CHANNEL,
  STATE_CHANNEL,
  requestChannel,
  stateChannel,
  tracingChannelOf,
  channelOf,
  type OperationName,
  type RequestMessage,
  type StateMessage,
} from './diagnostics.js';
export type { ClientEvents, HostsChange } from './client-core.js';
export { parseEnsembleConfig, parseMemberLine, formatMember, clientHostsOf, CONFIG_NODE } from './ensemble-config.js';
export type { EnsembleConfig, EnsembleMember, MemberRole } from './ensemble-config.js';
export type { ReconfigOptions } from './ensemble-ops.js';
export { HostProvider } from './host-provider.js';
export { ConnectionState, type ErrorPolicy } from './connection-state.js';
export { RetryPolicies, isRetryableError, backoffMs, type RetryPolicy } from './retry-policies.js';
export type { ClientOptions, AclProvider } from './options.js';
export type { AuthInfo } from './session.js';
export { digestMd5Mechanism, type DigestMd5Options, type SaslExchange, type SaslMechanism, type SaslOptions } from './sasl.js';
export type { TlsOptions, TlsSetting, HostLookup } from '@tenure/zookeeper';
export type { PersistentWatch } from './persistent-watch.js';
export { Transaction, type TransactionResult, type TransactionCreateOptions } from './transaction.js';
export type { WatchEvent, WatchEventType, WatchCallback, WatchResetEvent, PersistentWatchEvent } from './watch-events.js';
export { DataTooLargeError, NotStartedError, TransactionError, type TransactionOpResult } from './errors.js';
export { OutcomeUnknownError, answerOf } from './outcome-unknown-error.js';
export type { RetryAmbiguousWrites } from './write-outcome.js';
export { PROTECTED_PREFIX, protectedPrefix, protectedIdOf, unprotectedName, newProtectedId } from './protected-create.js';
export { systemClock, unrefTimer, type Clock, type TimerHandle } from '@tenure/protocol';
export { silentLogger, childLogger, type Logger } from './logger.js';
export { unlimitedListeners } from './node-builtins.js';
export type { NodeData } from './request-size.js';
export { CompressionError, DecompressionError, type CompressionProvider, type CompressionOption } from './compression.js';
export type { GzipOptions } from './gzip-streams.js';

// What users of the client need from the protocol package, so one import suffices.
export {
  CreateMode,
  WatcherType,
  EventType,
  Perms,
  OPEN_ACL_UNSAFE,
  CREATOR_ALL_ACL,
  READ_ACL_UNSAFE,
  digestId,
  ErrorCode,
  TenureError,
  IllegalStateError,
  InvalidArgumentError,
  asError,
  KeeperError,
  ConnectionLossError,
  SessionExpiredError,
  SessionMovedError,
  OperationTimeoutError,
  NoNodeError,
  NodeExistsError,
  BadVersionError,
  ReconfigDisabledError,
  ReconfigInProgressError,
  NewConfigNoQuorumError,
  UnimplementedError,
  NotEmptyError,
  NoAuthError,
  NoChildrenForEphemeralsError,
  BadArgumentsError,
  InvalidACLError,
  NoWatcherError,
  AuthFailedError,
  NotReadOnlyError,
  AbortError,
  TimeoutError,
  ClosedError,
  InvalidPathError,
  TlsError,
  type TlsRefusal,
  type ACL,
  type Id,
  type Stat,
  type ClientInfo,
  type Transport,
} from '@tenure/protocol';
