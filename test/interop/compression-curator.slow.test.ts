/**
 * Tenure's compression and Apache Curator's (Debian's libcurator-framework-java 5.4, its
 * GzipCompressionProvider with `.compressed()` / `.decompressed()`) on one real ZooKeeper: Java
 * writes compressed nodes that Tenure reads with `decompressed: true`, and the reverse, with the
 * read bytes equal to the written ones; in plain creates, setData and transactions. The stored
 * members are Curator's: the same fixed header (Curator 5.4 writes OS byte 0, JDK 17's
 * GZIPOutputStream 255, Tenure's default), and where the two zlib versions deflate alike, the same
 * bytes. Tenure's caches follow Java's compressed nodes. The Java side
 * is test/interop/compression-java/CuratorCompressionWorker.java, compiled by this suite.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecompressionError, gzip, type Client } from '@tenure/client';
import { TreeCache, NodeCache } from '@tenure/cache';
import { EventLog, TestingServer, TestClients, realZooKeeper } from '@tenure/testing';
import { compileJava, javaToolchain, JavaProgram, type CompiledJava } from './java.js';

const zk = realZooKeeper();
const java = javaToolchain();
const SOURCES = [fileURLToPath(new URL('./compression-java/CuratorCompressionWorker.java', import.meta.url))];
const BASE = '/compression';

const hex = (b: Uint8Array): string => (b.length === 0 ? '-' : Buffer.from(b).toString('hex'));
const unhex = (s: string): Buffer => (s === '-' ? Buffer.alloc(0) : Buffer.from(s, 'hex'));

/** A service's config as a Java service would store it: the data CURATOR-725 and SOLR-17537 are about. */
const config = Buffer.from(
  JSON.stringify({
    cluster: 'orders',
    replicas: Array.from({ length: 12 }, (_, i) => ({ host: `10.0.0.${i}`, port: 8983, state: i % 3 ? 'active' : 'recovering' })),
  }),
);
const PAYLOADS: Record<string, Buffer> = {
  empty: Buffer.alloc(0),
  'one byte': Buffer.from('x'),
  'a JSON config': config,
  'random bytes (incompressible)': randomBytes(3000),
  '400 KB of text': Buffer.from('state.json '.repeat(40_000)),
  'a 150 KB JSON array': Buffer.from(JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `user${i}`, tag: i % 17 })))),
};
/**
 * Payloads whose DEFLATE stream every zlib version writes alike (an empty block, a literal, stored
 * blocks, one long run). For structured text the choice of matches differs between zlib versions:
 * the JDK deflates with the system's libz (1.2.13 on Debian 12), Node 20 with its bundled 1.3.1, so
 * a JSON config's members differ after the header (both decompress to the same bytes, tested above).
 */
const EXACT = ['empty', 'one byte', 'random bytes (incompressible)', '400 KB of text'];

describe.skipIf(!zk.available || !java.available)('compressed nodes shared with Curator on ZooKeeper 3.8', () => {
  let server: TestingServer;
  let compiled: CompiledJava;
  let curator: JavaProgram;
  let clients: TestClients;
  let client: Client;
  /** Writes with OS byte 0, as Curator 5.4 does. */
  let client54: Client;
  let n = 0;
  const fresh = (): string => `${BASE}/n${n++}`;

  beforeAll(async () => {
    [compiled, server] = await Promise.all([compileJava(SOURCES), TestingServer.start()]);
    curator = await JavaProgram.start(
      { classpath: compiled.classpath, mainClass: 'CuratorCompressionWorker', args: [server.connectString] },
      /^ready$/,
      60_000,
    );
    clients = new TestClients(() => server.transport());
    client = await clients.open({ maxBufferBytes: 4 * 1024 * 1024 });
    client54 = await clients.open({ compression: gzip({ osByte: 0 }) });
    await client.create(BASE);
  }, 120_000);
  afterAll(async () => {
    await curator?.stop();
    await clients?.closeAll();
    await server?.close();
    compiled?.dispose();
  });

  const ask = async (line: string, answer: RegExp): Promise<string> => {
    const got = await curator.ask(line, new RegExp(`${answer.source}|^error `));
    if (got.startsWith('error ')) throw new Error(`Java: ${got}`);
    return got;
  };
  const javaRead = async (path: string): Promise<Buffer> => unhex((await ask(`read ${path}`, /^data /)).slice(5));
  const javaRaw = async (path: string): Promise<Buffer> => unhex((await ask(`raw ${path}`, /^raw /)).slice(4));

  it.each(Object.keys(PAYLOADS))('Java create().compressed() → Tenure getData({ decompressed }): %s, equal bytes', async (name) => {
    const data = PAYLOADS[name]!;
    const path = fresh();
    await ask(`create ${path} ${hex(data)}`, /^created /);
    const stored = (await client.getData(path)).data;
    expect(stored.subarray(0, 10)).toEqual(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0])); // Curator 5.4's header
    const read = await client.getData(path, { decompressed: true });
    expect(read.data.equals(data)).toBe(true);
    // And Java's setData().compressed() over it.
    const next = Buffer.concat([data, Buffer.from(' v2')]);
    await ask(`set ${path} ${hex(next)}`, /^set /);
    expect((await client.getData(path, { decompressed: true })).data.equals(next)).toBe(true);
  });

  it.each(Object.keys(PAYLOADS))('Tenure create({ compressed }) → Java getData().decompressed(): %s, equal bytes', async (name) => {
    const data = PAYLOADS[name]!;
    const path = fresh();
    await client.create(path, data, { compressed: true });
    expect((await javaRead(path)).equals(data)).toBe(true);
    const stored = await javaRaw(path);
    expect(stored.subarray(0, 10)).toEqual(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])); // JDK 16+'s OS byte
    expect(gunzipSync(stored).equals(data)).toBe(true);
    const next = Buffer.concat([data, Buffer.from(' v2')]);
    await client.setData(path, next, { compressed: true });
    expect((await javaRead(path)).equals(next)).toBe(true);
  });

  it.each(EXACT)('the stored member is byte for byte the one Curator writes: %s', async (name) => {
    const data = PAYLOADS[name]!;
    const curatorMember = unhex((await ask(`provider ${hex(data)}`, /^gzip /)).slice(5));
    const jdkMember = unhex((await ask(`stream ${hex(data)}`, /^gzip /)).slice(5));
    const ours = fresh();
    await client54.create(ours, data, { compressed: true });
    expect((await javaRaw(ours)).equals(curatorMember)).toBe(true); // OS byte 0: Curator 5.4
    const theirs = fresh();
    await ask(`create ${theirs} ${hex(data)}`, /^created /);
    expect((await client.getData(theirs)).data.equals(curatorMember)).toBe(true);
    // The default (OS byte 255) is what JDK 16+'s GZIPOutputStream and Curator 5.5+ on it write.
    expect(Buffer.from(await gzip().compress(data, '/')).equals(jdkMember)).toBe(true);
  });

  it('transactions: Curator transactionOp().create().compressed() / setData().compressed() and Tenure transaction({ compressed }) read each other', async () => {
    const a = fresh();
    await ask(`txn ${a} ${hex(config)} ${hex(Buffer.from('second'))}`, /^txn /);
    expect((await client.getData(a, { decompressed: true })).data.toString()).toBe('second');
    const b = fresh();
    await client
      .transaction()
      .create(b, config, { compressed: true })
      .setData(b, PAYLOADS['400 KB of text']!, { compressed: true })
      .commit();
    expect((await javaRead(b)).equals(PAYLOADS['400 KB of text']!)).toBe(true);
    const [r] = await client.multiRead([{ type: 'getData', path: b, decompressed: true }]);
    expect(r?.type === 'getData' && r.data.equals(PAYLOADS['400 KB of text']!)).toBe(true);
  });

  it('caches: a TreeCache and a NodeCache with decompressed: true follow nodes Java writes compressed', async () => {
    const root = fresh();
    await client.create(root);
    await ask(`create ${root}/a ${hex(config)}`, /^created /);
    await ask(`create ${root}/b ${hex(Buffer.from('bee'))}`, /^created /);
    const cache = new TreeCache(client, root, { decompressed: true });
    const node = new NodeCache(client, `${root}/b`, { decompressed: true });
    const log = new EventLog<string>();
    cache.on('changed', (n) => void log.push(`${n.path} ${n.data.toString()}`));
    node.on('changed', (n) => void log.push(`node ${n.data.toString()}`));
    try {
      await Promise.all([cache.start({ timeoutMs: 10_000 }), node.start({ timeoutMs: 10_000 })]);
      expect(cache.get(`${root}/a`)!.data.equals(config)).toBe(true);
      expect(node.current!.data.toString()).toBe('bee');
      await ask(`set ${root}/b ${hex(Buffer.from('bee 2'))}`, /^set /);
      await log.until((l) => l.includes(`${root}/b bee 2`) && l.includes('node bee 2'));
    } finally {
      await Promise.all([cache.close(), node.close()]);
    }
  });

  it('data that is not compressed: Tenure rejects with DecompressionError (code and path), as Java throws ZipException', async () => {
    const path = fresh();
    await client.create(path, 'plain text, never compressed');
    const err = await client.getData(path, { decompressed: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecompressionError);
    expect(err).toMatchObject({ code: 'BAD_COMPRESSED_DATA', path });
    expect(await curator.ask(`read ${path}`, /^(data|error) /)).toMatch(/^error java\.util\.zip\.ZipException/);
  });
});
