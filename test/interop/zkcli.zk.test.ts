/**
 * ZooKeeper's own command-line client, zkCli.sh from Debian's `zookeeper` package, against the
 * embedded server's TCP listener: create, get, set, ls, stat and delete, with the output checked
 * line by line and against the server's own view of the tree.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { existsSync } from 'node:fs';
import { createEmbeddedServer, type EmbeddedServer } from '@tenure/server';
import { realZooKeeper } from '@tenure/testing';
import { ZKCLI, zkCliRun } from './zkcli.js';

const zk = realZooKeeper();
if (zk.available && !existsSync(ZKCLI) && (process.env.CI === 'true' || process.env.CI === '1')) {
  throw new Error(`${ZKCLI} is missing: apt-get install zookeeper`);
}

/** zkCli's exit code and output, without SLF4J's start-up lines. */
async function zkCli(server: string, commands: string[], timeoutMs = 45_000): Promise<{ code: number | null; output: string }> {
  const { code, output } = await zkCliRun(server, commands, timeoutMs);
  return {
    code,
    output: output
      .split('\n')
      .filter((l) => !l.startsWith('SLF4J'))
      .join('\n'),
  };
}

/** `name = value` lines of zkCli's stat output. */
function statFields(output: string): Record<string, string> {
  return Object.fromEntries([...output.matchAll(/^(\w+) = (.*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

const hex = (n: bigint): string => `0x${n.toString(16)}`;

describe.skipIf(!zk.available)('zkCli.sh against the embedded server over TCP', () => {
  let server: EmbeddedServer;
  const warnings: string[] = [];
  let connectString: string;

  beforeAll(async () => {
    server = createEmbeddedServer({
      tickMs: 200,
      logger: { warn: (obj, msg) => warnings.push(`${msg ?? ''} ${String((obj as { err?: Error })?.err ?? '')}`) },
    });
    ({ connectString } = await server.listen({ port: 0 }));
  });
  afterAll(async () => {
    // The server never had to log a failure for anything these clients sent.
    expect(warnings).toEqual([]);
    await server?.close();
  });

  test('create, get, set, ls, stat and delete, and the errors zkCli reports', async () => {
    const { code, output } = await zkCli(connectString, [
      'create /tenure hello',
      'create /tenure/child c',
      'create /gone x',
      'create -e /tenure/ephemeral e',
      'create -s /tenure/seq- s',
      'get /tenure',
      'set /tenure world',
      'get /tenure',
      'ls /tenure',
      'delete /tenure/child',
      'delete /gone',
      'ls /',
      'stat /tenure',
      'get /gone',
      'delete /tenure/nope',
      'create /tenure again',
      'delete /tenure',
      'quit',
    ]);
    // zkCli exits 1 after a command failed, as four did here on purpose.
    expect(code).toBe(1);
    expect(output).toContain('WatchedEvent state:SyncConnected type:None path:null');
    expect(output).toMatch(/^Created \/tenure$/m);
    expect(output).toMatch(/^Created \/tenure\/child$/m);
    expect(output).toMatch(/^Created \/gone$/m);
    expect(output).toMatch(/^Created \/tenure\/ephemeral$/m);
    expect(output).toMatch(/^Created \/tenure\/seq-\d{10}$/m);
    // get prints the data; after the set, the new data.
    const lines = output.split('\n');
    expect(lines.indexOf('hello')).toBeGreaterThan(-1);
    expect(lines.indexOf('world')).toBeGreaterThan(lines.indexOf('hello'));
    const seq = /^Created (\/tenure\/seq-\d{10})$/m.exec(output)![1]!.slice('/tenure/'.length);
    expect(lines).toContain(`[${['child', 'ephemeral', seq].sort().join(', ')}]`); // ls sorts
    expect(output).toMatch(/^\[tenure, zookeeper\]$/m);
    expect(output).toContain('Node does not exist: /gone');
    expect(output).toContain('Node does not exist: /tenure/nope');
    expect(output).toContain('Node already exists: /tenure');
    expect(output).toContain('Node not empty: /tenure');
    expect(output).toContain('WatchedEvent state:Closed type:None path:null');

    // stat printed what the server holds; only the ephemeral's removal at quit came after it.
    const node = server.node('/tenure')!;
    expect(node.data?.toString()).toBe('world');
    const stat = statFields(output);
    expect(BigInt(stat.pZxid!)).toBeLessThan(node.stat.pzxid);
    expect(stat).toMatchObject({
      cZxid: hex(node.stat.czxid),
      mZxid: hex(node.stat.mzxid),
      cversion: String(node.stat.cversion - 1),
      dataVersion: '1',
      aclVersion: '0',
      ephemeralOwner: '0x0',
      dataLength: '5',
      numChildren: String(node.children.length + 1),
    });
    expect(new Date(stat.mtime!).getTime()).toBe(Math.floor(Number(node.stat.mtime) / 1000) * 1000);
    // quit closed the session: its ephemeral is gone, the child and /gone were deleted.
    expect(node.children.sort()).toEqual([seq]);
    expect(server.node('/gone')).toBeUndefined();
    expect(server.sessions()).toEqual([]);
  });

  test('zkCli through a chroot', async () => {
    await zkCli(connectString, ['create /app a', 'quit']);
    const { code, output } = await zkCli(`${connectString}/app`, ['create /inside 1', 'ls /', 'get /inside', 'quit']);
    expect(code).toBe(0);
    expect(output).toMatch(/^Created \/inside$/m);
    expect(output).toMatch(/^\[inside\]$/m);
    expect(server.node('/app/inside')?.data?.toString()).toBe('1');
  });
});
