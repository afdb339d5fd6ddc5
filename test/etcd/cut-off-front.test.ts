/**
 * A front end cut off from etcd (every connection to it silent, through a FaultProxy) while its
 * client is idle and holds a Mutex. The engine answers pings itself, so only an unanswered lease
 * keep-alive tells it that etcd is out of reach: it must stop serving before the lease can expire.
 * The holder's lease signal aborts before a waiter on another client is granted the lock, and its
 * client goes SUSPENDED, then LOST, never RECONNECTED while cut off.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionState, type Client } from '@tenure/client';
import { etcdTransport } from '@tenure/etcd';
import { Mutex } from '@tenure/locks';
import { FaultProxy } from '@tenure/testing';
import { useEtcdBed } from './etcd-bed.js';

describe('a front end cut off from etcd', () => {
  const bed = useEtcdBed();
  const open = (endpoint: string, sessionTimeoutMs: number): Promise<Client> =>
    bed.open(bed.transport(etcdTransport(endpoint, { prefix: '/cut-off' })), sessionTimeoutMs);

  it("stops vouching for its idle holder's session before etcd can expire it", async () => {
    const proxy = await FaultProxy.start(bed.etcd.endpoint.replace(/^http:\/\//, ''));
    const holder = await open(`http://${proxy.address}`, 4000);
    const other = await open(bed.etcd.endpoint, 20_000);
    const states: string[] = [];
    holder.on('stateChanged', (s: string) => states.push(s));
    const lease = await new Mutex(holder, '/lock').acquire();
    const order: string[] = [];
    lease.signal.addEventListener('abort', () => order.push('holder aborted'));
    // Idle from here: only pings, which the engine answers without etcd.
    proxy.blackhole();
    const waiter = await new Mutex(other, '/lock').acquire({ timeoutMs: 30_000 });
    order.push('waiter granted');
    expect(waiter.fencingToken).toBeGreaterThan(lease.fencingToken);
    expect(order).toEqual(['holder aborted', 'waiter granted']);
    await holder.waitForState(ConnectionState.LOST, { timeoutMs: 20_000 });
    expect(states.slice(0, 2)).toEqual([ConnectionState.SUSPENDED, ConnectionState.LOST]);
    await waiter.release();
    proxy.heal();
    await holder.waitForState(ConnectionState.RECONNECTED, { timeoutMs: 20_000 });
    await proxy.close();
  }, 60_000);
});
