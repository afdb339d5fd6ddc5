import { defineConfig } from 'vitest/config';
import { readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Tests import every @tenure/* package from its TypeScript source, so no build is needed to test.
const root = fileURLToPath(new URL('.', import.meta.url));
const packages = readdirSync(`${root}packages`).filter((p) => existsSync(`${root}packages/${p}/src/index.ts`));

// Suites that need a real Apache ZooKeeper are named *.zk.test.ts; they share servers and ports,
// so they run in their own project, one file at a time.
const ZK = '**/*.zk.test.ts';

export default defineConfig({
  resolve: {
    alias: packages.map((p) => ({ find: new RegExp(`^@tenure/${p}$`), replacement: `${root}packages/${p}/src/index.ts` })),
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      ...packages.map((p) => ({
        extends: true as const,
        test: { name: p, include: [`packages/${p}/test/**/*.test.ts`], exclude: [ZK, '**/node_modules/**'] },
      })),
      { extends: true as const, test: { name: 'cross', include: ['test/**/*.test.ts'], exclude: [ZK, '**/node_modules/**'] } },
      {
        extends: true as const,
        test: {
          name: 'real-zookeeper',
          include: ['packages/*/test/**/*.zk.test.ts', 'test/**/*.zk.test.ts'],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
