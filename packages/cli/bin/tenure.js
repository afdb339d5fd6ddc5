#!/usr/bin/env node
// The `tenure` command. This launcher is committed (npm links a workspace's bin at install time,
// before the root build compiles ../dist), and runs the compiled CLI.
let cli;
try {
  cli = await import('../dist/main.js');
} catch (err) {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/main.js')) {
    process.stderr.write('tenure: the CLI is not built yet: run `npm run build` in the repository first\n');
    process.exit(2);
  }
  throw err;
}
process.exitCode = await cli.main(process.argv.slice(2));
