/**
 * Re-runs a bench script under bench/tsconfig.json, whose `paths` map every @tenure/* import to the
 * package's TypeScript source: a bench measures the code as it is, never a stale dist/. Call it
 * before the first @tenure/* import (which must therefore be dynamic); the parent exits with the
 * child's status.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BENCH_TSCONFIG = fileURLToPath(new URL('./tsconfig.json', import.meta.url));

export function rerunFromSource(entryUrl: string): void {
  if (process.env.TSX_TSCONFIG_PATH === BENCH_TSCONFIG) return;
  const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(entryUrl), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, TSX_TSCONFIG_PATH: BENCH_TSCONFIG },
  });
  process.exit(r.status ?? 1);
}
