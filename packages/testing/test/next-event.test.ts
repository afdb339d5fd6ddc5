import { EventEmitter } from 'node:events';
import { describe, expect, test } from 'vitest';
import { createClient, ConnectionState } from '@tenure/client';
import { createEmbeddedServer } from '@tenure/server';
import { EventLog, nextEvent } from '@tenure/testing';

describe('nextEvent', () => {
  test('resolves with the first argument of the first matching event and detaches', async () => {
    const emitter = new EventEmitter();
    const seen = nextEvent<number>(emitter, 'n', (n) => n > 1);
    emitter.emit('n', 1);
    emitter.emit('n', 2);
    emitter.emit('n', 3);
    await expect(seen).resolves.toBe(2);
    expect(emitter.listenerCount('n')).toBe(0);
  });

  test('passes every argument to the predicate', async () => {
    const emitter = new EventEmitter();
    const seen = nextEvent<string>(emitter, 'pair', (_a, b) => b === 'y');
    emitter.emit('pair', 'a', 'x');
    emitter.emit('pair', 'b', 'y');
    await expect(seen).resolves.toBe('b');
  });

  test('rejects naming the event after timeoutMs, and detaches', async () => {
    const emitter = new EventEmitter();
    await expect(nextEvent(emitter, 'never', undefined, { timeoutMs: 20 })).rejects.toThrow(/'never'/);
    expect(emitter.listenerCount('never')).toBe(0);
  });

  test('rejects when the predicate throws', async () => {
    const emitter = new EventEmitter();
    const seen = nextEvent(emitter, 'n', () => {
      throw new Error('bad predicate');
    });
    emitter.emit('n', 1);
    await expect(seen).rejects.toThrow('bad predicate');
    expect(emitter.listenerCount('n')).toBe(0);
  });

  test("works on the client's typed emitter", async () => {
    const server = createEmbeddedServer();
    const client = createClient({ transport: server.transport() });
    const connected = nextEvent<ConnectionState>(client, 'stateChanged', (s) => s === ConnectionState.CONNECTED);
    await client.start();
    await expect(connected).resolves.toBe(ConnectionState.CONNECTED);
    await client.close();
    await server.close();
  });
});

describe('EventLog', () => {
  test('until resolves on the push that makes the predicate hold; it compares as a plain array', async () => {
    const log = new EventLog<string>();
    const two = log.atLeast(2);
    log.push('a');
    setImmediate(() => log.push('b'));
    await expect(two).resolves.toBe(log);
    expect(log).toEqual(['a', 'b']);
    expect(log.filter((s) => s === 'a')).toEqual(['a']);
    await log.until((l) => l.includes('a')); // already true: resolves at once
    await expect(log.atLeast(3, { timeoutMs: 20 })).rejects.toThrow(/timed out/);
  });
});
