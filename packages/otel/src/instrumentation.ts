/**
 * TenureInstrumentation: OpenTelemetry spans and metrics from Tenure's diagnostics channels, the
 * way @opentelemetry/instrumentation-undici follows undici's. Nothing is patched: enable()
 * subscribes to the channels and disable() unsubscribes, so while it is disabled (or never made)
 * the client and recipes publish nothing (each checks `hasSubscribers`).
 *
 * Parenting: each channel's start event fires synchronously in the caller of the operation, so
 * `context.active()` there is the caller's context, whatever it awaited before. The spans are
 * children of it; they are not made active for the operation's own work (a channel subscriber
 * cannot enter a context for code it does not run), so a lock's own ZooKeeper calls are siblings
 * of its `tenure lock acquire` span under the caller's span.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Span } from '@opentelemetry/api';
import { InstrumentationBase, type InstrumentationConfig } from '@opentelemetry/instrumentation';
import {
  ACQUIRE_CHANNEL,
  GROUP_MEMBERS_CHANNEL,
  LEADER_STATE_CHANNEL,
  QUEUE_ITEM_CHANNEL,
  REQUEST_CHANNEL,
  STATE_CHANNEL,
  type AcquireMessage,
  type GroupMembersMessage,
  type LeaderStateMessage,
  type LeaseLike,
  type QueueItemMessage,
  type RequestMessage,
  type StateMessage,
} from './channels.js';
import { GaugeState, makeInstruments, type Instruments } from './metrics.js';
import * as N from './names.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from './version.js';

export interface TenureInstrumentationConfig extends InstrumentationConfig {
  /** Spans only under a caller's span: an operation with no active span then makes none (metrics still count). Default false. */
  requireParentSpan?: boolean;
}

/** A span in flight with the moment it began (for its duration metric). */
interface Flight {
  span: Span | undefined;
  started: number;
}

type Hooks<M> = { start(m: M): void; end(m: M): void; asyncStart(m: M): void; asyncEnd(m: M): void; error(m: M): void };

interface Subscription {
  unsubscribe(): void;
}

/** Channel state, made on first use: InstrumentationBase's constructor calls enable() before our fields would exist. */
interface State {
  gauges: GaugeState;
  subscriptions: Subscription[];
  /** The span in flight of each channel message (one object per operation). */
  flights: WeakMap<object, Flight>;
  terms: Map<string, Span>;
}

export class TenureInstrumentation extends InstrumentationBase<TenureInstrumentationConfig> {
  declare private state: State | undefined;
  declare private instruments: Instruments | undefined;

  constructor(config: TenureInstrumentationConfig = {}) {
    super(PACKAGE_NAME, PACKAGE_VERSION, config);
  }

  /** No module to patch: everything comes from diagnostics channels. */
  protected override init(): undefined {
    return undefined;
  }

  override enable(): void {
    super.enable();
    const st = this.st();
    if (st.subscriptions.length > 0) return;
    this.follow<RequestMessage>(REQUEST_CHANNEL, {
      start: (m) => this.requestStarted(m),
      asyncEnd: (m) => this.requestEnded(m),
    });
    this.listen<StateMessage>(STATE_CHANNEL, (m) => this.stateChanged(m));
    this.follow<AcquireMessage>(ACQUIRE_CHANNEL, {
      start: (m) => this.acquireStarted(m),
      asyncEnd: (m) => this.acquireEnded(m),
    });
    this.listen<LeaderStateMessage>(LEADER_STATE_CHANNEL, (m) => this.leaderChanged(m));
    this.listen<GroupMembersMessage>(GROUP_MEMBERS_CHANNEL, (m) => this.membersChanged(m));
    this.follow<QueueItemMessage>(QUEUE_ITEM_CHANNEL, {
      start: (m) => this.itemStarted(m),
      asyncEnd: (m) => this.itemEnded(m),
    });
  }

  override disable(): void {
    super.disable();
    const st = this.st();
    for (const s of st.subscriptions.splice(0)) s.unsubscribe();
    for (const span of st.terms.values()) span.end();
    st.terms.clear();
  }

  protected override _updateMetricInstruments(): void {
    this.instruments = makeInstruments(this.meter, this.st().gauges);
  }

  private st(): State {
    return (this.state ??= {
      gauges: new GaugeState(),
      subscriptions: [],
      flights: new WeakMap(),
      terms: new Map(),
    });
  }

  private metrics(): Instruments {
    return (this.instruments ??= makeInstruments(this.meter, this.st().gauges));
  }

  /**
   * Subscribes to the given events of a TracingChannel only (Node subscribes a partial set; the
   * others then cost their publisher one inactive-channel check).
   */
  private follow<M extends object>(name: string, hooks: Partial<Hooks<M>>): void {
    const channel = diagnostics_channel.tracingChannel<unknown, M>(name);
    const guarded: Partial<Hooks<M>> = {};
    for (const [k, f] of Object.entries(hooks) as Array<[keyof Hooks<M>, (m: M) => void]>) guarded[k] = (m: M) => this.safely(f, m);
    channel.subscribe(guarded as Hooks<M>);
    this.st().subscriptions.push({ unsubscribe: () => channel.unsubscribe(guarded as Hooks<M>) });
  }

  private listen<M>(name: string, onMessage: (m: M) => void): void {
    const handler = (m: unknown): void => this.safely(onMessage, m as M);
    diagnostics_channel.subscribe(name, handler);
    this.st().subscriptions.push({ unsubscribe: () => diagnostics_channel.unsubscribe(name, handler) });
  }

  /** A fault in telemetry must never reach the caller's operation. */
  private safely<M>(run: (m: M) => void, m: M): void {
    try {
      run(m);
    } catch (err) {
      this._diag.error('tenure instrumentation failed', err);
    }
  }

  /**
   * A span under the caller's active context; none when a parent is required and missing. `root`:
   * a span of its own trace, for what no caller asked for (a leadership term, a consumer's item),
   * which would otherwise hang under whatever context started the recipe's watch or loop.
   */
  private startSpan(name: string, kind: SpanKind, attributes: Attributes, root = false): Span | undefined {
    if (root) return this.tracer.startSpan(name, { kind, attributes, root: true });
    const parent = context.active();
    if (this.getConfig().requireParentSpan === true && trace.getSpan(parent) === undefined) return undefined;
    return this.tracer.startSpan(name, { kind, attributes }, parent);
  }

  // ---- client operations ----

  private requestStarted(m: RequestMessage): void {
    const attributes: Attributes = { [N.ATTR_OPERATION]: m.op };
    if (m.path !== undefined) attributes[N.ATTR_PATH] = m.path;
    const span = this.startSpan(N.operationSpanName(m.op), SpanKind.CLIENT, attributes);
    this.st().flights.set(m, { span, started: performance.now() });
  }

  private requestEnded(m: RequestMessage): void {
    const flights = this.st().flights;
    const flight = flights.get(m);
    if (!flight) return;
    flights.delete(m);
    const failed = m.error !== undefined;
    const span = flight.span;
    if (span) {
      // A no-op tracer's spans record nothing: spare them the attributes.
      if (span.isRecording()) {
        span.setAttributes(serverAttributes(m.server));
        if (m.sessionId !== undefined && m.sessionId !== 0n) span.setAttribute(N.ATTR_SESSION_ID, sessionHex(m.sessionId));
        if (m.size !== undefined) span.setAttribute(N.ATTR_DATA_SIZE, m.size);
        if (failed) failSpan(span, m.error, m.code);
      }
      span.end();
    }
    const attributes: Attributes = { [N.ATTR_OPERATION]: m.op, [N.ATTR_OUTCOME]: failed ? 'error' : 'ok' };
    if (failed && m.code !== undefined) attributes[N.ATTR_ERROR_TYPE] = m.code;
    this.metrics().operationDuration.record((performance.now() - flight.started) / 1000, attributes);
  }

  // ---- sessions ----

  private stateChanged(m: StateMessage): void {
    this.st().gauges.sessions.set(m.sessionId, m.state);
    const attributes: Attributes = { [N.ATTR_SESSION_STATE]: m.state };
    if (m.previous !== null) attributes[N.ATTR_SESSION_PREVIOUS_STATE] = m.previous;
    this.metrics().sessionTransitions.add(1, attributes);
  }

  // ---- locks ----

  private acquireStarted(m: AcquireMessage): void {
    const span = this.startSpan(N.SPAN_LOCK_ACQUIRE, SpanKind.INTERNAL, {
      [N.ATTR_LOCK_KIND]: m.lock,
      [N.ATTR_LOCK_PATH]: m.path,
      [N.ATTR_LOCK_COUNT]: m.count,
    });
    this.st().flights.set(m, { span, started: performance.now() });
  }

  private acquireEnded(m: AcquireMessage): void {
    const flights = this.st().flights;
    const flight = flights.get(m);
    if (!flight) return;
    flights.delete(m);
    const granted = performance.now();
    const failed = m.error !== undefined;
    const leases: LeaseLike[] = m.result === undefined ? [] : Array.isArray(m.result) ? m.result : [m.result];
    if (flight.span) {
      const first = leases[0];
      if (first) flight.span.setAttributes({ [N.ATTR_LOCK_NODE]: first.path, [N.ATTR_FENCING_TOKEN]: first.fencingToken.toString() });
      if (failed) failSpan(flight.span, m.error, errorType(m.error));
      flight.span.end();
    }
    const attributes: Attributes = {
      [N.ATTR_LOCK_KIND]: m.lock,
      [N.ATTR_LOCK_PATH]: m.path,
      [N.ATTR_LOCK_OUTCOME]: failed ? 'error' : 'acquired',
    };
    if (failed) attributes[N.ATTR_ERROR_TYPE] = errorType(m.error);
    const metrics = this.metrics();
    metrics.lockWait.record((granted - flight.started) / 1000, attributes);
    // The hold: from the grant until the lease's signal aborts (released, or lost).
    const holdAttributes: Attributes = { [N.ATTR_LOCK_KIND]: m.lock, [N.ATTR_LOCK_PATH]: m.path };
    for (const lease of leases) {
      const record = (): void =>
        this.safely((d: number) => this.metrics().lockHold.record(d / 1000, holdAttributes), performance.now() - granted);
      if (lease.signal.aborted) record();
      else lease.signal.addEventListener('abort', record, { once: true });
    }
  }

  // ---- leadership and groups ----

  /** A term is a span from election to its end; both show as events on it, and the gauge follows. */
  private leaderChanged(m: LeaderStateMessage): void {
    const st = this.st();
    const key = `${m.recipe}\0${m.path}\0${m.id}`;
    st.gauges.noteLeadership(m.recipe, m.path, m.id, m.leader);
    const attributes: Attributes = {
      [N.ATTR_ELECTION_PATH]: m.path,
      [N.ATTR_PARTICIPANT_ID]: m.id,
      [N.ATTR_LEADER_RECIPE]: m.recipe,
      [N.ATTR_LEADER_NODE]: m.node,
      [N.ATTR_FENCING_TOKEN]: m.fencingToken.toString(),
    };
    if (m.leader) {
      st.terms.get(key)?.end();
      const span = this.startSpan(N.SPAN_LEADERSHIP, SpanKind.INTERNAL, attributes, true);
      span?.addEvent(N.EVENT_LEADERSHIP_TAKEN, attributes);
      if (span) st.terms.set(key, span);
      else st.terms.delete(key);
      return;
    }
    const span = st.terms.get(key);
    st.terms.delete(key);
    if (!span) return;
    span.addEvent(N.EVENT_LEADERSHIP_ENDED, { ...attributes, [N.ATTR_LEADERSHIP_END]: m.end ?? 'released' });
    span.setAttribute(N.ATTR_LEADERSHIP_END, m.end ?? 'released');
    span.end();
  }

  private membersChanged(m: GroupMembersMessage): void {
    this.st().gauges.groups.set(m.path, m.members.length);
  }

  // ---- queues ----

  private itemStarted(m: QueueItemMessage): void {
    // A consumer's item starts a trace of its own; an items() loop's body belongs to the loop's caller.
    const attributes = {
      [N.ATTR_QUEUE_PATH]: m.queue,
      [N.ATTR_QUEUE_NODE]: m.node,
      [N.ATTR_QUEUE_INDEX]: m.index,
      [N.ATTR_QUEUE_VIA]: m.via,
    };
    const span = this.startSpan(N.SPAN_QUEUE_ITEM, SpanKind.CONSUMER, attributes, m.via === 'consumer');
    this.st().flights.set(m, { span, started: performance.now() });
  }

  private itemEnded(m: QueueItemMessage): void {
    const flights = this.st().flights;
    const flight = flights.get(m);
    if (!flight) return;
    flights.delete(m);
    const failed = m.error !== undefined;
    if (flight.span) {
      if (failed) failSpan(flight.span, m.error, errorType(m.error));
      flight.span.end();
    }
    const attributes: Attributes = { [N.ATTR_QUEUE_PATH]: m.queue, [N.ATTR_QUEUE_OUTCOME]: failed ? 'error' : 'done' };
    if (failed) attributes[N.ATTR_ERROR_TYPE] = errorType(m.error);
    this.metrics().queueConsumed.add(1, attributes);
  }
}

function failSpan(span: Span, error: unknown, code: string | undefined): void {
  if (error instanceof Error) span.recordException(error);
  else span.recordException(String(error));
  if (code !== undefined) span.setAttribute(N.ATTR_ERROR_TYPE, code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** A TenureError's string code ('NONODE', 'OUTCOME_UNKNOWN'), else the error's name. */
function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : typeof error;
}

// A process talks to a few servers with a few sessions: the last of each is parsed once.
let lastServer: { server: string; attributes: Attributes } | undefined;
let lastSession: { id: bigint; hex: string } | undefined;

/** host:port as server.address and server.port; a transport's name (in process) as the address alone. */
function serverAttributes(server: string | null | undefined): Attributes {
  if (!server) return {};
  if (lastServer?.server === server) return lastServer.attributes;
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(server);
  const attributes = m ? { [N.ATTR_SERVER_ADDRESS]: m[1]!, [N.ATTR_SERVER_PORT]: Number(m[2]) } : { [N.ATTR_SERVER_ADDRESS]: server };
  lastServer = { server, attributes };
  return attributes;
}

/** A session id as ZooKeeper logs it: 0x and 16 hex digits. */
function sessionHex(id: bigint): string {
  if (lastSession?.id === id) return lastSession.hex;
  const hex = `0x${BigInt.asUintN(64, id).toString(16).padStart(16, '0')}`;
  lastSession = { id, hex };
  return hex;
}
