import { defineConfig } from 'vitest/config';
import { aliases, SLOW } from './vitest.aliases.js';

// `npm run test:slow`: SIGKILL cycles, corruption cases, Chromium and JVM interop suites (*.slow.test.ts),
// one file at a time since they start servers, browsers and JVMs.
export default defineConfig({
  resolve: { alias: aliases },
  test: {
    name: 'slow',
    include: ['packages/*/test/**/' + SLOW.slice(3), 'test/**/' + SLOW.slice(3)],
    exclude: ['**/node_modules/**'],
    fileParallelism: false,
    passWithNoTests: true,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
