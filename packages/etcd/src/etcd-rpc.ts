/**
 * etcd's gRPC API through @grpc/grpc-js and @grpc/proto-loader, from etcd 3.4's own .proto files
 * (proto/). Unary calls become promises with a deadline; the two streams (Watch, LeaseKeepAlive)
 * are handed out raw. No call is retried here: an unknown outcome is the caller's to resolve.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { InvalidArgumentError } from '@tenure/protocol';
import { EtcdTlsError, EtcdUnavailableError } from './errors.js';

export interface EtcdTls {
  /** PEM CA bundle that signs etcd's certificates. */
  ca?: Buffer | string;
  /** PEM client certificate and key, when etcd asks for one (--client-cert-auth). */
  cert?: Buffer | string;
  key?: Buffer | string;
}

export interface EtcdAuth {
  username: string;
  password: string;
}

export interface EtcdConnectOptions {
  tls?: EtcdTls;
  auth?: EtcdAuth;
  /** Deadline of each unary call. Default 5,000 ms. */
  callTimeoutMs?: number;
}

/** Protobuf messages as proto-loader hands them out: int64 as decimal strings, bytes as Buffers. */
export type Msg = Record<string, unknown>;
type Unary = (req: Msg, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Msg) => void) => void;
type Service = grpc.Client & Record<string, Unary & ((md: grpc.Metadata, opts?: grpc.CallOptions) => grpc.ClientDuplexStream<Msg, Msg>)>;

const PROTO_DIR = fileURLToPath(new URL('../proto/', import.meta.url));
let loaded: grpc.GrpcObject | undefined;

function protos(): grpc.GrpcObject {
  loaded ??= grpc.loadPackageDefinition(
    protoLoader.loadSync(['rpc.proto'], { includeDirs: [PROTO_DIR], keepCase: true, longs: String, enums: Number, defaults: true }),
  );
  return loaded;
}

/** `http://host:port` / `https://…` / `host:port` → gRPC target and whether TLS is asked for. */
function parseEndpoint(url: string): { address: string; secure: boolean } {
  const m = /^(?:(https?):\/\/)?([^/]+)\/?$/.exec(url.trim());
  if (m === null) throw new InvalidArgumentError(`not an etcd endpoint: ${JSON.stringify(url)}`);
  return { address: m[2]!, secure: m[1] === 'https' };
}

/** A failed call as a typed error; a TLS handshake refused (wrong CA, no client certificate) says so. */
function unavailable(method: string, err: grpc.ServiceError): EtcdUnavailableError {
  const details = err.details || err.message;
  const tls = /certificate|ssl|tls|handshake|alert/i.test(details);
  return tls
    ? new EtcdTlsError(`etcd ${method}: the TLS handshake with etcd failed: ${details}`, err.code, { cause: err })
    : new EtcdUnavailableError(`etcd ${method}: ${details}`, err.code, { cause: err });
}

export class EtcdRpc {
  readonly kv: Service;
  readonly watch: Service;
  readonly lease: Service;
  readonly maintenance: Service;
  private readonly auth: Service;
  private token: string | undefined;
  private readonly callTimeoutMs: number;
  readonly endpoints: readonly string[];
  /** Unary calls and keep-alive messages sent, by method: the etcd round trips the bench and tests count. */
  readonly calls = new Map<string, number>();

  constructor(
    endpoints: readonly string[],
    private readonly options: EtcdConnectOptions = {},
  ) {
    if (endpoints.length === 0) throw new InvalidArgumentError('etcdTransport needs at least one endpoint');
    this.endpoints = endpoints;
    const parsed = endpoints.map(parseEndpoint);
    const secure = options.tls !== undefined || parsed.some((p) => p.secure);
    // One channel over every endpoint: grpc-js's ipv4/ipv6/dns resolvers take a comma list only for
    // literal addresses; otherwise the first endpoint's name is resolved (and may hold many records).
    const literal = parsed.every((p) => /^\d+\.\d+\.\d+\.\d+:\d+$/.test(p.address));
    const target = literal ? `ipv4:${parsed.map((p) => p.address).join(',')}` : `dns:${parsed[0]!.address}`;
    const t = options.tls;
    const buf = (v: Buffer | string | undefined): Buffer | null => (v === undefined ? null : Buffer.from(v));
    const creds = secure ? grpc.credentials.createSsl(buf(t?.ca), buf(t?.key), buf(t?.cert)) : grpc.credentials.createInsecure();
    const channelOptions: grpc.ChannelOptions = {
      'grpc.max_receive_message_length': 256 * 1024 * 1024,
      'grpc.max_send_message_length': 64 * 1024 * 1024,
      'grpc.keepalive_time_ms': 5000,
      'grpc.keepalive_timeout_ms': 3000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      'grpc.lb_policy_name': 'round_robin',
    };
    const pkg = protos()['etcdserverpb'] as grpc.GrpcObject;
    const make = (name: string): Service => {
      const Ctor = pkg[name] as grpc.ServiceClientConstructor;
      return new Ctor(target, creds, channelOptions) as unknown as Service;
    };
    this.kv = make('KV');
    this.watch = make('Watch');
    this.lease = make('Lease');
    this.maintenance = make('Maintenance');
    this.auth = make('Auth');
    this.callTimeoutMs = options.callTimeoutMs ?? 5000;
  }

  /** The TLS options given (for the HTTP look at /metrics). */
  get tls(): EtcdTls | undefined {
    return this.options.tls;
  }

  /** Metadata of every call: the auth token, and `hasleader` so a member without a leader refuses rather than hangs. */
  metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set('hasleader', 'true');
    if (this.token !== undefined) md.set('token', this.token);
    return md;
  }

  /** Authenticates (etcd's user/password auth) when configured; again after the token expires. */
  async authenticate(): Promise<void> {
    const a = this.options.auth;
    if (a === undefined) return;
    this.token = undefined;
    const res = await this.unaryOnce(this.auth, 'Authenticate', { name: a.username, password: a.password });
    this.token = res['token'] as string;
  }

  async call(service: 'kv' | 'lease' | 'maintenance', method: string, req: Msg, timeoutMs = this.callTimeoutMs): Promise<Msg> {
    const svc = service === 'kv' ? this.kv : service === 'lease' ? this.lease : this.maintenance;
    try {
      return await this.unaryOnce(svc, method, req, timeoutMs);
    } catch (err) {
      if (this.options.auth !== undefined && err instanceof EtcdUnavailableError && /invalid auth token/.test(err.message)) {
        await this.authenticate();
        return this.unaryOnce(svc, method, req, timeoutMs);
      }
      throw err;
    }
  }

  /** Counts one etcd round trip (or stream message) of `method`. */
  count(method: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
  }

  private unaryOnce(svc: Service, method: string, req: Msg, timeoutMs = this.callTimeoutMs): Promise<Msg> {
    this.count(method);
    return new Promise<Msg>((resolve, reject) => {
      svc[method]!(req, this.metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (err) reject(unavailable(method, err));
        else resolve(res);
      });
    });
  }

  close(): void {
    this.kv.close();
    this.watch.close();
    this.lease.close();
    this.maintenance.close();
    this.auth.close();
  }
}
