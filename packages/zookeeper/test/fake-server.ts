/**
 * A scripted ZooKeeper peer on a loopback socket, for what a real server will not do on demand:
 * a read-only handshake, garbage, truncated or oversized frames, mismatched xids, odd chunking.
 */
import { createServer, type Server, type Socket } from 'node:net';
import {
  FrameReader,
  decodeConnectRequest,
  decodeRequest,
  encodeConnectResponse,
  frame,
  type ConnectRequest,
  type Request,
  type RequestHeader,
} from '@tenure/protocol';

export interface FakePeer {
  socket: Socket;
  /** The next frame payload the client sent. */
  nextFrame(): Promise<Buffer>;
  /** The handshake the client sent. */
  connectRequest(): Promise<ConnectRequest>;
  /** Answers the handshake (a 16-byte password, timeout 4000, not read-only by default). */
  accept(opts?: { timeOut?: number; sessionId?: bigint; readOnly?: boolean; includeReadOnly?: boolean }): void;
  /** The next request. */
  nextRequest(): Promise<{ header: RequestHeader; request: Request }>;
  /** Writes raw bytes, split into the given chunk sizes with a macrotask between chunks. */
  writeChunked(bytes: Buffer, sizes: number[]): Promise<void>;
}

export class FakeServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  private constructor(onPeer: (peer: FakePeer) => void | Promise<void>) {
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {});
      socket.setNoDelay(true);
      void onPeer(makePeer(socket));
    });
  }

  static async start(onPeer: (peer: FakePeer) => void | Promise<void>): Promise<FakeServer> {
    const s = new FakeServer(onPeer);
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    s.port = (s.server.address() as { port: number }).port;
    return s;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function makePeer(socket: Socket): FakePeer {
  const reader = new FrameReader(16 * 1024 * 1024);
  const frames: Buffer[] = [];
  let waiter: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    for (const f of reader.push(chunk)) frames.push(Buffer.from(f));
    waiter?.();
  });
  const nextFrame = async (): Promise<Buffer> => {
    while (frames.length === 0) await new Promise<void>((r) => (waiter = r));
    return frames.shift()!;
  };
  return {
    socket,
    nextFrame,
    async connectRequest() {
      return decodeConnectRequest(await nextFrame());
    },
    accept({ timeOut = 4000, sessionId = 0x1234n, readOnly = false, includeReadOnly = true } = {}) {
      const passwd = timeOut > 0 ? Buffer.alloc(16, 0xab) : Buffer.alloc(16);
      socket.write(
        frame(
          encodeConnectResponse(
            { protocolVersion: 0, timeOut, sessionId: timeOut > 0 ? sessionId : 0n, passwd, readOnly },
            includeReadOnly,
          ),
        ),
      );
    },
    async nextRequest() {
      return decodeRequest(await nextFrame());
    },
    async writeChunked(bytes, sizes) {
      let at = 0;
      for (const n of sizes) {
        if (at >= bytes.length) break;
        socket.write(bytes.subarray(at, at + n));
        at += n;
        await new Promise((r) => setImmediate(r));
      }
      if (at < bytes.length) socket.write(bytes.subarray(at));
    },
  };
}
