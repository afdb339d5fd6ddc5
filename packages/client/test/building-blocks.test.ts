/** Unit tests of the small modules: SetWatches batching, namespaces, state dispatch, host order. */
import { describe, expect, it } from 'vitest';
import { OpCode, SET_WATCHES_MAX_LENGTH } from '@tenure/protocol';
import { ConnectionState, InvalidPathError, protectedIdOf, unprotectedName } from '../src/index.js';
import { HostRing, reconnectCapMs, reconnectDelayMs } from '../src/host-ring.js';
import { silentLogger } from '../src/logger.js';
import { Namespace } from '../src/namespace.js';
import { setWatchesBatches } from '../src/set-watches.js';
import { StateDispatcher } from '../src/state-dispatcher.js';

const empty = { dataWatches: [], existWatches: [], childWatches: [], persistentWatches: [], persistentRecursiveWatches: [] };

describe('SetWatches batching', () => {
  it('keeps every batch at or below 128 KiB of path length, all with the same relativeZxid', () => {
    const paths = Array.from({ length: 3000 }, (_, i) => `/p/${'y'.repeat(100)}${i}`);
    const batches = setWatchesBatches({ ...empty, dataWatches: paths.slice(0, 1000), childWatches: paths.slice(1000) }, 77n);
    expect(batches.length).toBeGreaterThan(1);
    let seen = 0;
    for (const b of batches) {
      expect(b.type).toBe(OpCode.setWatches);
      expect(b.relativeZxid).toBe(77n);
      const len = [...b.dataWatches, ...b.existWatches, ...b.childWatches].reduce((n, p) => n + p.length, 0);
      expect(len).toBeLessThanOrEqual(SET_WATCHES_MAX_LENGTH);
      seen += b.dataWatches.length + b.childWatches.length;
    }
    expect(seen).toBe(3000);
  });

  it('uses SetWatches2 only for batches with persistent watches', () => {
    const b = setWatchesBatches({ ...empty, dataWatches: ['/a'], persistentRecursiveWatches: ['/r'] }, 1n);
    expect(b).toEqual([
      {
        type: OpCode.setWatches2,
        relativeZxid: 1n,
        dataWatches: ['/a'],
        existWatches: [],
        childWatches: [],
        persistentWatches: [],
        persistentRecursiveWatches: ['/r'],
      },
    ]);
    expect(setWatchesBatches(empty, 1n)).toEqual([]);
  });
});

describe('namespace', () => {
  it('prefixes and strips', () => {
    const ns = new Namespace('app');
    expect(ns.prefix).toBe('/app');
    expect(ns.name).toBe('app');
    expect(ns.toServer('/')).toBe('/app');
    expect(ns.toServer('/x/y')).toBe('/app/x/y');
    expect(ns.fromServer('/app')).toBe('/');
    expect(ns.fromServer('/app/x')).toBe('/x');
    expect(ns.fromServer('/apple')).toBe('/apple');
    expect(ns.contains('/apple')).toBe(false);
    expect(new Namespace('/a/b').toServer('/c')).toBe('/a/b/c');
    expect(new Namespace('').toServer('/c')).toBe('/c');
    expect(() => new Namespace('a//b')).toThrow(InvalidPathError);
  });
});

describe('protected names', () => {
  it('parses Curator protected names', () => {
    const name = '_c_0f8f3f2e-8a8e-4c43-9a4b-6e0e2f1c2b3a-lock-0000000007';
    expect(protectedIdOf(name)).toBe('0f8f3f2e-8a8e-4c43-9a4b-6e0e2f1c2b3a');
    expect(unprotectedName(name)).toBe('lock-0000000007');
    expect(protectedIdOf('lock-1')).toBeUndefined();
    expect(unprotectedName('lock-1')).toBe('lock-1');
  });
});

describe('state dispatcher', () => {
  it('follows Curator: CONNECTED once, RECONNECTED after, READ_ONLY does not count, no duplicates', () => {
    const out: string[] = [];
    const d = new StateDispatcher((s) => out.push(s), silentLogger);
    d.suspended(); // not connected yet: nothing
    d.lost();
    d.connected(true);
    d.connected(true);
    d.connected(false);
    d.suspended();
    d.suspended();
    d.lost();
    d.connected(false);
    expect(out).toEqual([
      ConnectionState.READ_ONLY,
      ConnectionState.CONNECTED,
      ConnectionState.SUSPENDED,
      ConnectionState.LOST,
      ConnectionState.RECONNECTED,
    ]);
  });

  it('delivers states posted from a listener after the current one reached every listener', () => {
    const out: string[] = [];
    const d: StateDispatcher = new StateDispatcher((s) => {
      out.push(`1:${s}`);
      if (s === ConnectionState.CONNECTED) d.suspended();
      out.push(`2:${s}`);
    }, silentLogger);
    d.connected(false);
    expect(out).toEqual(['1:CONNECTED', '2:CONNECTED', '1:SUSPENDED', '2:SUSPENDED']);
  });
});

describe('hosts and reconnect pacing', () => {
  it('shuffles and rotates', () => {
    const ring = new HostRing(['a', 'b', 'c'], () => 0);
    const order = [ring.next(), ring.next(), ring.next(), ring.next()];
    expect(new Set(order.slice(0, 3)).size).toBe(3);
    expect(order[3]).toBe(order[0]);
    expect(ring.nextOther(ring.order[1]!)).not.toBe(ring.order[1]);
  });

  it('backs off with jitter, capped at min(1 s, T/3)', () => {
    expect(reconnectCapMs(60_000)).toBe(1000);
    expect(reconnectCapMs(900)).toBe(300);
    expect(reconnectDelayMs(0, 60_000)).toBe(0);
    for (let f = 1; f < 30; f++) {
      const d = reconnectDelayMs(f, 900);
      expect(d).toBeLessThanOrEqual(300);
      expect(d).toBeGreaterThanOrEqual(Math.min(300, 10 * 2 ** (f - 1)) / 2 - 1);
    }
  });
});

describe('fast path check', () => {
  it('agrees with the protocol validator on every input', async () => {
    const fc = (await import('fast-check')).default;
    const { pathProblem } = await import('@tenure/protocol');
    const { checkPath } = await import('../src/path-check.js');
    const alphabet = fc.constantFrom(
      '/',
      '.',
      'a',
      'Z',
      '0',
      '-',
      '_',
      '\u0000',
      '\u001f',
      '\u007f',
      '\u0085',
      '\ud800',
      '\ue000',
      '\ufff0',
      '\u00e9',
      ' ',
    );
    const paths = fc.oneof(
      fc.string({ unit: alphabet, maxLength: 12 }),
      fc.string({ unit: alphabet, maxLength: 12 }).map((s) => '/' + s),
      fc.string(),
    );
    fc.assert(
      fc.property(paths, fc.boolean(), (p, seq) => {
        let threw = false;
        try {
          checkPath(p, seq);
        } catch (e) {
          threw = true;
          expect(e).toBeInstanceOf(InvalidPathError);
        }
        expect(threw).toBe(pathProblem(p, seq) !== undefined);
      }),
      { numRuns: 20_000 },
    );
  });
});
