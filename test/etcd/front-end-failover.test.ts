/**
 * Two tenure-server front ends over one etcd and prefix (`--etcd`), reached by one client through
 * the @tenure/zookeeper transport with both in its connect string:
 * - the client's front end is SIGKILLed: the client re-attaches to the other with the same session
 *   id; its ephemeral stays, and its watch (re-sent by SetWatches) fires for a later change;
 * - a client that goes silent (every packet dropped, as if SIGKILLed): its ephemeral is gone within
 *   its negotiated timeout plus 3 s, seen from the other front end.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionState, CreateMode, type Client, type WatchEvent } from '@tenure/client';
import { FaultProxy, TenureServerProcess } from '@tenure/testing';
import { zookeeper } from '@tenure/zookeeper';
import { useEtcdBed } from './etcd-bed.js';

describe('two tenure-server front ends over one etcd', () => {
  const bed = useEtcdBed();
  let alive: TenureServerProcess | undefined;
  const start = async (): Promise<TenureServerProcess> =>
    bed.server(
      await TenureServerProcess.start({ args: ['--etcd', bed.etcd.endpoint, '--etcd-prefix', '/failover', '--tick-time', '1000'] }),
    );
  const open = (connectString: string, sessionTimeoutMs = 6000): Promise<Client> => bed.open(zookeeper(connectString), sessionTimeoutMs);

  it('a SIGKILLed front end: the session moves to the other, its ephemeral stays, its watch fires', async () => {
    const [a, b] = [await start(), await start()];
    const client = await open(`${a.connectString},${b.connectString}`);
    const other = await open(b.connectString);
    await client.create('/held', 'x', { mode: CreateMode.EPHEMERAL });
    await client.create('/watched', 'v0');
    const id = client.sessionId;
    let fired!: (e: WatchEvent) => void;
    const event = new Promise<WatchEvent>((resolve) => (fired = resolve));
    await client.getData('/watched', { watch: (e) => fired(e) });
    // Kill the front end the client is on (it picked one of the two).
    const victim = client.connectedServer === a.connectString ? a : b;
    const survivor = victim === a ? b : a;
    alive = survivor;
    await victim.kill();
    await client.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 15_000 });
    expect(client.sessionId).toBe(id);
    const witness = victim === b ? await open(survivor.connectString) : other;
    await witness.sync('/held');
    expect((await witness.exists('/held'))?.ephemeralOwner).toBe(id);
    await witness.setData('/watched', 'v1');
    expect(await event).toMatchObject({ type: 'NodeDataChanged', path: '/watched' });
  }, 60_000);

  it("a silent client's ephemeral is gone within its negotiated timeout plus 3 s", async () => {
    const s = alive ?? (await start());
    const proxy = await FaultProxy.start(s.connectString);
    const victim = await open(proxy.connectString, 4000);
    const T = victim.negotiatedTimeoutMs;
    const watcher = await open(s.connectString, 20_000);
    await victim.create('/silent', '', { mode: CreateMode.EPHEMERAL });
    let deleted!: () => void;
    const gone = new Promise<void>((resolve) => (deleted = resolve));
    await watcher.sync('/silent');
    await watcher.exists('/silent', { watch: (e) => e.type === 'NodeDeleted' && deleted() });
    const silentAt = performance.now();
    proxy.blackhole();
    await gone;
    expect(performance.now() - silentAt).toBeLessThan(T + 3000);
    await proxy.close();
  }, 60_000);
});
