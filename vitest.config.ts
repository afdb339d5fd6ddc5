import { defineConfig } from 'vitest/config';
import { aliases, packages, SLOW } from './vitest.aliases.js';

// Suites that need a real Apache ZooKeeper are named *.zk.test.ts. Each starts its own servers on
// free ports, but each also starts JVMs: they run in a group of their own after the rest, two at a time.
const ZK = '**/*.zk.test.ts';

export default defineConfig({
  resolve: {
    alias: aliases,
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Most files wait on timers and sockets, not on the CPU (vitest's default on two cores is one
    // file at a time, and the suite then used half a core): four at a time.
    maxWorkers: 4,
    projects: [
      ...packages.map((p) => ({
        extends: true as const,
        test: { name: p, include: [`packages/${p}/test/**/*.test.ts`], exclude: [ZK, SLOW, '**/node_modules/**'] },
      })),
      { extends: true as const, test: { name: 'cross', include: ['test/**/*.test.ts'], exclude: [ZK, SLOW, '**/node_modules/**'] } },
      {
        extends: true as const,
        test: {
          name: 'real-zookeeper',
          include: ['packages/*/test/**/*.zk.test.ts', 'test/**/*.zk.test.ts'],
          exclude: [SLOW, '**/node_modules/**'],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
