#!/usr/bin/env node
// The tenure-server command. It runs the built package (../dist); this launcher is committed so
// that npm links it at install time, before any build. In this repository `npm ci` builds dist
// through the root `prepare` script.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('tenure-server: @tenure/tenure-server is not built (no dist/): run `npm run build` in the repository\n');
  process.exit(1);
}
await import(entry.href);
