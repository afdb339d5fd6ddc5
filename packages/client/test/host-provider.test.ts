/**
 * The host list and ZooKeeper's rebalancing (StaticHostProvider.updateServerList), shown on many
 * simulated clients with a seeded random source: after a change the sessions spread evenly over
 * the new list, and a client whose server stays keeps it with the probability the rule gives.
 */
import { describe, expect, test } from 'vitest';
import { seededRandom } from '@tenure/testing';
import { HostProvider } from '../src/host-provider.js';

const CLIENTS = 3000;

/** CLIENTS clients spread evenly over `before`, each handed `after`: where each ends up, and how many moved. */
function rebalance(before: string[], after: string[], seed: number): { spread: Map<string, number>; moved: number } {
  const random = seededRandom(seed);
  const spread = new Map<string, number>(after.map((h) => [h, 0]));
  let moved = 0;
  for (let i = 0; i < CLIENTS; i++) {
    const provider = new HostProvider(before, random);
    const current = before[i % before.length]!;
    const move = provider.update(after, current);
    const server = move ? provider.next() : current;
    if (move) moved++;
    spread.set(server, (spread.get(server) ?? 0) + 1);
  }
  return { spread, moved };
}

function expectEven(spread: Map<string, number>, servers: string[]): void {
  const fair = CLIENTS / servers.length;
  for (const s of servers) expect(spread.get(s), s).toBeGreaterThan(fair * 0.9);
  for (const s of servers) expect(spread.get(s), s).toBeLessThan(fair * 1.1);
  expect([...spread.keys()].sort()).toEqual([...servers].sort());
}

describe('HostProvider', () => {
  test('round-robin over a shuffled list; nextOther skips the current host', () => {
    const p = new HostProvider(['a', 'b', 'c'], seededRandom(1));
    const first = [p.next(), p.next(), p.next()];
    expect([...first].sort()).toEqual(['a', 'b', 'c']);
    expect(p.next()).toBe(first[0]);
    expect(p.nextOther(first[1]!)).not.toBe(first[1]);
  });

  test('3 → 5 servers: 2/5 of the sessions move, all of them to the added servers; the spread is even', () => {
    const before = ['a', 'b', 'c'];
    const after = ['a', 'b', 'c', 'd', 'e'];
    const { spread, moved } = rebalance(before, after, 7);
    expectEven(spread, after);
    // A client whose server stays keeps it with probability S/(S+added) = 3/5.
    expect(moved / CLIENTS).toBeGreaterThan(0.36);
    expect(moved / CLIENTS).toBeLessThan(0.44);
  });

  test('5 → 3 servers: only the sessions of removed servers move, spread over the ones left', () => {
    const before = ['a', 'b', 'c', 'd', 'e'];
    const after = ['a', 'b', 'c'];
    const { spread, moved } = rebalance(before, after, 11);
    expectEven(spread, after);
    expect(moved).toBe((CLIENTS * 2) / 5);
  });

  test('one server replaced (a, b, c → a, b, d): the sessions of c all go to d, the others stay', () => {
    const { spread, moved } = rebalance(['a', 'b', 'c'], ['a', 'b', 'd'], 13);
    expect(moved).toBe(CLIENTS / 3);
    expect(spread.get('d')).toBe(CLIENTS / 3);
    expectEven(spread, ['a', 'b', 'd']);
  });

  test('4 → 3 with two replaced (a, b, c, d → a, e, f): pOld and pNew balance old and new servers', () => {
    const after = ['a', 'e', 'f'];
    const { spread } = rebalance(['a', 'b', 'c', 'd'], after, 17);
    expectEven(spread, after);
  });

  test('after a move, next() tries each candidate once, then goes round-robin over the whole list', () => {
    const p = new HostProvider(['a', 'b', 'c'], seededRandom(3));
    expect(p.update(['d', 'e'], 'a')).toBe(true);
    expect(p.moving).toBe(true);
    const tried = [p.next(), p.next()];
    expect([...tried].sort()).toEqual(['d', 'e']);
    const after = [p.next(), p.next(), p.next()];
    expect(p.moving).toBe(false);
    expect(new Set(after)).toEqual(new Set(['d', 'e']));
  });

  test('an update that keeps my server in a list of the same size changes nothing for me', () => {
    const p = new HostProvider(['a', 'b', 'c'], seededRandom(5));
    expect(p.update(['c', 'b', 'a'], 'b')).toBe(false);
    expect(p.nextOther('b')).not.toBe('b');
  });
});
