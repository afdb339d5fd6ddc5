import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

// Tests import every @tenure/* package from its TypeScript source, so no build is needed to test.
const src = (name: string) => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));
const packages = ['protocol', 'server', 'client'];

export default defineConfig({
  resolve: {
    alias: packages.map((p) => ({ find: `@tenure/${p}`, replacement: src(p) })),
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      ...packages.map((p) => ({
        extends: true as const,
        test: { name: p, include: [`packages/${p}/test/**/*.test.ts`] },
      })),
      { extends: true as const, test: { name: 'cross', include: ['test/**/*.test.ts'], exclude: ['test/zookeeper/**'] } },
    ],
  },
});
