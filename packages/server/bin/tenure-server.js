#!/usr/bin/env node
// The tenure-server command. It runs the built package (../dist); this launcher is committed so
// that npm can link it at install time, before a build. In this repository `npm ci` builds
// dist through the root `prepare` script.
let main;
try {
  ({ main } = await import('../dist/process/main.js'));
} catch (err) {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist')) {
    process.stderr.write('tenure-server: @tenure/server is not built (no dist/): run `npm run build` in the repository\n');
    process.exit(1);
  }
  throw err;
}
await main(process.argv.slice(2));
