/** The `tenure` command's entry: argv in, exit code out (0 ok, 1 ZooKeeper error, 2 bad usage). */
export async function main(argv: readonly string[]): Promise<number> {
  process.stderr.write(`tenure: not implemented yet (${argv.join(' ')})\n`);
  return 2;
}
