/**
 * Apache Curator's LeaderLatch (Debian's libcurator-recipes-java 5.4) on two tenure-server front ends
 * over one etcd: six participants, each with its own CuratorFramework, alternating between the front
 * ends (test/interop/leader-java/CuratorLatchHandover.java). Each leader holds one term and closes
 * its latch, handing over. No two terms overlap, by the participants' own evidence through
 * ZooKeeper: each new leader's latch node is first in the queue, the previous leader's node is gone,
 * and the term node says the previous term ended (never that it is still leading); their czxids
 * rise, and (one JVM, one monotonic clock) the [start, end] intervals are disjoint too.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TenureServerProcess } from '@tenure/testing';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from '../interop/java.js';
import { startFrontEnds, type FrontEnds } from './front-ends.js';

const java = javaToolchain();
const SOURCE = fileURLToPath(new URL('../interop/leader-java/CuratorLatchHandover.java', import.meta.url));
const PARTICIPANTS = 6;
const TERM_MS = 300;

interface Term {
  id: string;
  connect: string;
  node: string;
  czxid: bigint;
  start: bigint;
  end: bigint;
  first: boolean;
  previousGone: boolean;
  termNodeSaid: string;
  stillLeader: boolean;
}

function parseTerm(line: string): Term {
  const [, id, connect, node, czxid, start, end, first, previousGone, said, still] = line.split(' ');
  return {
    id: id!,
    connect: connect!,
    node: node!,
    czxid: BigInt(czxid!),
    start: BigInt(start!),
    end: BigInt(end!),
    first: first === 'true',
    previousGone: previousGone === 'true',
    termNodeSaid: said!.replace('_', ' '),
    stillLeader: still === 'true',
  };
}

describe.skipIf(!java.available)('Curator LeaderLatch on two tenure-server front ends over one etcd', () => {
  let frontEnds: FrontEnds;
  let a: TenureServerProcess;
  let b: TenureServerProcess;
  let compiled: CompiledJava;

  beforeAll(async () => {
    [frontEnds, compiled] = await Promise.all([startFrontEnds('/latch'), compileJava([SOURCE])]);
    [a, b] = frontEnds.servers as [TenureServerProcess, TenureServerProcess];
  }, 120_000);
  afterAll(async () => {
    await frontEnds?.stop();
    compiled?.dispose();
  });

  test('six participants hand over term by term with no overlap; every one leads once', async () => {
    const jvm = await JavaProgram.start({
      classpath: compiled.classpath,
      mainClass: 'CuratorLatchHandover',
      args: [a.connectString, b.connectString, '/election/latch', '/election/term', String(PARTICIPANTS), String(TERM_MS)],
    });
    try {
      await jvm.waitFor((l) => l === 'done' || l.startsWith('error '), 200_000);
    } finally {
      await jvm.stop();
    }
    expect(jvm.lines.filter((l) => l.startsWith('error '))).toEqual([]);
    const terms = jvm.lines.filter((l) => l.startsWith('term ')).map(parseTerm);

    // Every participant led once, from both front ends: PARTICIPANTS - 1 hand-overs.
    expect(terms.map((t) => t.id).sort()).toEqual(Array.from({ length: PARTICIPANTS }, (_, i) => `p${i}`));
    expect(new Set(terms.map((t) => t.connect))).toEqual(new Set([a.connectString, b.connectString]));
    expect(terms.length - 1).toBeGreaterThanOrEqual(PARTICIPANTS - 1);

    terms.forEach((t, i) => {
      // The participants' own ordering, through ZooKeeper: at each term's start the previous
      // leader's latch node was gone, ours was first, and the term node said the previous term had ended.
      expect(t, t.id).toMatchObject({ first: true, previousGone: true, stillLeader: true });
      expect(t.termNodeSaid).toBe(i === 0 ? 'none' : `ended ${terms[i - 1]!.id}`);
      if (i > 0) {
        // Fencing tokens rise with the hand-overs, and (one JVM's monotonic clock) the terms are disjoint.
        expect(t.czxid > terms[i - 1]!.czxid).toBe(true);
        expect(t.start > terms[i - 1]!.end).toBe(true);
      }
    });
  }, 240_000);
});
