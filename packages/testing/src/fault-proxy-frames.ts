/**
 * ZooKeeper framing for FaultProxy: which request is which (client → server) and where each reply
 * begins (server → client), so that exactly one chosen reply can be swallowed. A connection is
 * recognised as ZooKeeper by its first frame (a ConnectRequest: about 45 bytes, protocol version
 * 0); anything else (TLS, HTTP, four-letter words, an echo test) passes untouched and opaque.
 */
import { FrameReader, OpCode, decodeRequest } from '@tenure/protocol';

export type OpName = keyof typeof OpCode;

/** Which request's reply to swallow: every given field must match; the first request that does is the one. */
export interface ReplyMatch {
  /** The request's xid on its connection. */
  xid?: number;
  /** The op, by code (OpCode.create2) or name ('create2'). For `multi`, `path` is its first op's. */
  op?: number | OpName;
  /** The server path the request names (chroot included). */
  path?: string;
}

/** A reply that was swallowed: its request reached the server, and the connection was then cut. */
export interface DroppedReply {
  /** The ProxyConnection's id. */
  connection: number;
  xid: number;
  op: number;
  path: string | undefined;
  /** The error code the swallowed reply carried (0: the request succeeded on the server). */
  err: number;
  /** The reply's zxid. */
  zxid: bigint;
}

/** A drop waiting for its request. */
export interface ArmedDrop {
  readonly match: ReplyMatch;
  resolve(dropped: DroppedReply): void;
}

/** Asked for each request on the wire: the armed drop it satisfies (consumed), or undefined. */
export type ClaimRequest = (xid: number, op: number, path: string | undefined) => ArmedDrop | undefined;

export function matches(match: ReplyMatch, xid: number, op: number, path: string | undefined): boolean {
  if (match.xid !== undefined && match.xid !== xid) return false;
  if (match.op !== undefined && (typeof match.op === 'number' ? match.op : OpCode[match.op]) !== op) return false;
  if (match.path !== undefined && match.path !== path) return false;
  return true;
}

function pathOf(payload: Buffer): string | undefined {
  try {
    const { request } = decodeRequest(payload);
    const r = request as { path?: unknown; prefixPath?: unknown; ops?: { path?: unknown }[] };
    if (typeof r.path === 'string') return r.path;
    if (typeof r.prefixPath === 'string') return r.prefixPath;
    const first = r.ops?.[0]?.path;
    return typeof first === 'string' ? first : undefined;
  } catch {
    return undefined; // an op the codec does not know: matched by op or xid only
  }
}

const HEAD_BYTES = 8;
/** Past any server's jute.maxbuffer: a proxy never refuses what the ends accept. */
const MAX_FRAME_BYTES = 256 * 1024 * 1024;

export class ZooKeeperFrames {
  private state: 'unknown' | 'zookeeper' | 'opaque' = 'unknown';
  private head = Buffer.alloc(0);
  private readonly up = new FrameReader(MAX_FRAME_BYTES);
  private readonly down = new FrameReader(MAX_FRAME_BYTES);
  private upSeen = 0;
  private downSeen = 0;
  /** Requests whose reply is to be swallowed, by xid. */
  private readonly marked = new Map<number, { op: number; path: string | undefined; drop: ArmedDrop }>();

  constructor(
    private readonly connection: number,
    private readonly claim: ClaimRequest,
  ) {}

  /** Client → server bytes (forwarded unchanged by the caller). */
  sniffUp(chunk: Buffer): void {
    if (this.state === 'opaque') return;
    let bytes = chunk;
    if (this.state === 'unknown') {
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length < HEAD_BYTES) return;
      const length = this.head.readInt32BE(0);
      const version = this.head.readInt32BE(4);
      this.state = length >= 28 && length <= 64 && version === 0 ? 'zookeeper' : 'opaque';
      bytes = this.head;
      this.head = Buffer.alloc(0);
      if (this.state === 'opaque') return;
    }
    let frames: Buffer[];
    try {
      frames = this.up.push(bytes);
    } catch {
      this.state = 'opaque';
      return;
    }
    for (const payload of frames) {
      if (this.upSeen++ === 0 || payload.length < 8) continue; // the ConnectRequest
      const xid = payload.readInt32BE(0);
      if (xid < 0) continue; // pings, auth, SetWatches
      const op = payload.readInt32BE(4);
      const path = pathOf(payload);
      const drop = this.claim(xid, op, path);
      if (drop) this.marked.set(xid, { op, path, drop });
    }
  }

  /**
   * Server → client bytes: what to forward, and the reply to swallow if one arrived (then the
   * caller cuts the connection and forwards nothing after it).
   */
  filterDown(chunk: Buffer): { forward: Buffer[]; dropped?: DroppedReply } {
    if (this.state !== 'zookeeper') return { forward: [chunk] };
    let frames: Buffer[];
    try {
      frames = this.down.push(chunk);
    } catch {
      this.state = 'opaque';
      return { forward: [chunk] };
    }
    const forward: Buffer[] = [];
    for (const payload of frames) {
      if (this.downSeen++ > 0 && payload.length >= 16) {
        const xid = payload.readInt32BE(0);
        const mark = this.marked.get(xid);
        if (mark) {
          const dropped: DroppedReply = {
            connection: this.connection,
            xid,
            op: mark.op,
            path: mark.path,
            zxid: payload.readBigInt64BE(4),
            err: payload.readInt32BE(12),
          };
          mark.drop.resolve(dropped);
          return { forward, dropped };
        }
      }
      const framed = Buffer.allocUnsafe(payload.length + 4);
      framed.writeInt32BE(payload.length, 0);
      payload.copy(framed, 4);
      forward.push(framed);
    }
    return { forward };
  }
}
