#!/usr/bin/env node
// The `tenure` command. This launcher is committed (npm links a workspace's bin at install time,
// before the root build compiles ../dist), and runs the compiled CLI.

// Errors are one line, never a stack trace; a closed pipe (`tenure ls -R / | head`) ends quietly.
const oneLine = (err) => {
  process.stderr.write(`tenure: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
  process.exit(1);
};
process.on('uncaughtException', oneLine);
process.on('unhandledRejection', oneLine);
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0);
  oneLine(err);
});

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
