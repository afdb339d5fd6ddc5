import { defineConfig } from 'vitest/config';
import { aliases, packages, SLOW } from './vitest.aliases.js';

// Suites that need a real Apache ZooKeeper are named *.zk.test.ts; they share servers and ports,
// so they run in their own project, one file at a time.
const ZK = '**/*.zk.test.ts';

export default defineConfig({
  resolve: {
    alias: aliases,
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
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
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
