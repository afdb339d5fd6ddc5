/**
 * The page the Chromium test loads: @tenure/client over @tenure/ws (the browser entries, picked by
 * the "browser" export conditions) and a @tenure/locks Mutex, driven from the test through
 * `globalThis.tenure` (page.evaluate) and reported in the DOM (`#status`).
 */
import { ConnectionState, createClient, type Client } from '@tenure/client';
import { Mutex, type Lease } from '@tenure/locks';
import { webSocket } from '@tenure/ws';

interface Dom {
  getElementById(id: string): { textContent: string | null } | null;
}
const dom = (globalThis as unknown as { document: Dom }).document;
const show = (text: string): void => {
  dom.getElementById('status')!.textContent = text;
};

let client: Client | undefined;
let mutex: Mutex | undefined;
let lease: Lease | undefined;
const states: string[] = [];

const tenure = {
  /** Connects to the embedded server's WebSocket listener; resolves once CONNECTED. */
  async connect(url: string): Promise<{ sessionId: string; states: string[] }> {
    client = createClient({ transport: webSocket(url), sessionTimeoutMs: 10_000 });
    client.on('stateChanged', (s: ConnectionState) => states.push(s));
    await client.start();
    show('connected');
    return { sessionId: client.sessionId.toString(), states };
  },

  /** Takes the Mutex at `path`; the fencing token and node path come back as strings. */
  async acquire(path: string): Promise<{ token: string; node: string }> {
    mutex = new Mutex(client!, path);
    lease = await mutex.acquire({ timeoutMs: 20_000 });
    show(`holding ${lease.fencingToken}`);
    return { token: lease.fencingToken.toString(), node: lease.path };
  },

  async release(): Promise<void> {
    await lease!.release();
    show('released');
  },

  /** Closes the lock and the client; returns every state the client went through. */
  async close(): Promise<{ closed: boolean; states: string[] }> {
    await mutex?.close();
    await client!.close();
    show('closed');
    return { closed: client!.closed, states };
  },
};

(globalThis as unknown as { tenure: typeof tenure }).tenure = tenure;
show('ready');
