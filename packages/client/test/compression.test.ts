/**
 * Compression on the embedded server: `compressed` / `decompressed` per call, `byDefault`, custom
 * providers (sync and async, given the path), transactions and multiRead, the size limit on the
 * compressed bytes, typed errors; and the gzip member itself, on node:zlib and on
 * CompressionStream (Node 20 has it globally), against node:zlib's own gunzip/gzip.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '@tenure/server';
import {
  CompressionError,
  DataTooLargeError,
  DecompressionError,
  TenureError,
  gzip,
  type Client,
  type ClientOptions,
  type CompressionProvider,
} from '../src/index.js';
import { gzipStreams } from '../src/gzip-streams.js';
import { crc32 } from '../src/gzip-member.js';
import { connect, startServer } from './harness.js';

let server: EmbeddedServer | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

async function open(options: Partial<ClientOptions> = {}): Promise<Client> {
  server ??= startServer();
  const { client } = await connect(server, options);
  clients.push(client);
  return client;
}

const text = Buffer.from('{"replicas":["10.0.0.1:8983","10.0.0.2:8983"],"state":"active"}'.repeat(40));
/** What Curator's GzipCompressionProvider writes for empty data on JDK 16+ (its testEmpty, OS byte 255). */
const CURATOR_EMPTY = Buffer.from([31, 139, 8, 0, 0, 0, 0, 0, 0, 255, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);

describe('the gzip member', () => {
  const providers: Array<[string, CompressionProvider]> = [
    ['node:zlib', gzip()],
    ['CompressionStream', gzipStreams()],
  ];

  it.each(providers)('%s: fixed header, gunzip reads it, and it reads what gzip writes', async (_name, p) => {
    for (const data of [text, randomBytes(5000), Buffer.from('x'), Buffer.alloc(300_000, 7)]) {
      const member = Buffer.from(await p.compress(data, '/p'));
      expect([...member.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
      expect(gunzipSync(member).equals(data)).toBe(true);
      expect(Buffer.from(await p.decompress(member, '/p')).equals(data)).toBe(true);
      // A member with a name, an mtime and another OS byte (what `gzip` the tool writes).
      expect(Buffer.from(await p.decompress(gzipSync(data), '/p')).equals(data)).toBe(true);
    }
    expect(Buffer.from(await p.compress(Buffer.alloc(0), '/p'))).toEqual(CURATOR_EMPTY);
  });

  it('node:zlib and CompressionStream write the same bytes; osByte 0 is Curator 5.4 / JDK 8', async () => {
    const a = Buffer.from(await gzip({ osByte: 0 }).compress(text, '/'));
    const b = Buffer.from(await gzipStreams({ osByte: 0 }).compress(text, '/'));
    expect(a.equals(b)).toBe(true);
    expect(a[9]).toBe(0);
  });

  it.each(providers)(
    '%s: bad data is a DecompressionError with the path (not gzip, truncated, bad CRC, trailing bytes, header flags)',
    async (_n, p) => {
      const good = Buffer.from(await p.compress(text, '/p'));
      const badCrc = Buffer.from(good);
      badCrc[good.length - 6]! ^= 0xff;
      const badLength = Buffer.from(good);
      badLength[good.length - 1]! ^= 0x01;
      const cases = {
        'not gzip': Buffer.from('plain text'),
        'too short': good.subarray(0, 12),
        truncated: good.subarray(0, good.length - 20),
        'bad CRC': badCrc,
        'bad length': badLength,
        // Node 20's DecompressionStream ignores bytes after the DEFLATE end (browsers throw, as the
        // spec says: gzip-in-chromium.slow.test.ts); node:zlib's engine counts them.
        ...(p === providers[0]![1] ? { 'two members': Buffer.concat([good, good]) } : {}),
        'bad method': Buffer.concat([good.subarray(0, 2), Buffer.from([7]), good.subarray(3)]),
        'FHCRC wrong': Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 2, 0, 0, 0, 0, 0, 255, 0, 0]), good.subarray(10)]),
      };
      for (const [what, bytes] of Object.entries(cases)) {
        const err = await Promise.resolve()
          .then(() => p.decompress(bytes, '/p'))
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err, what).toBeInstanceOf(DecompressionError);
        expect(err, what).toMatchObject({ code: 'BAD_COMPRESSED_DATA', path: '/p' });
      }
    },
  );

  it('crc32 is gzip’s', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });
});

describe('compressed operations', () => {
  it('create / setData { compressed } store gzip; getData { decompressed } reads it back; plain getData sees the stored bytes', async () => {
    const client = await open();
    await client.create('/c', text, { compressed: true });
    const stored = (await client.getData('/c')).data;
    expect(stored.length).toBeLessThan(text.length / 5);
    expect(gunzipSync(stored).equals(text)).toBe(true);
    expect((await client.getData('/c', { decompressed: true })).data.equals(text)).toBe(true);
    await client.setData('/c', 'v2', { compressed: true });
    expect((await client.getData('/c', { decompressed: true })).data.toString()).toBe('v2');
    // Protected, sequential, with parents and in a namespace: the data is compressed once.
    const ns = client.usingNamespace('app');
    const { path } = await ns.create('/a/b/seq-', text, { compressed: true, createParents: true, protection: true, mode: 3 });
    expect((await ns.getData(path, { decompressed: true })).data.equals(text)).toBe(true);
  });

  it('a watch set by getData { decompressed } fires as any', async () => {
    const client = await open();
    await client.create('/w', 'a', { compressed: true });
    const fired = new Promise<string>((resolve) => void client.getData('/w', { decompressed: true, watch: (e) => resolve(e.type) }));
    await client.setData('/w', 'b', { compressed: true });
    expect(await fired).toBe('NodeDataChanged');
  });

  it('byDefault: every write compresses and every read decompresses, unless the call says false', async () => {
    const plain = await open();
    const client = await open({ compression: { provider: gzip(), byDefault: true } });
    await client.create('/d', text);
    expect(gunzipSync((await plain.getData('/d')).data).equals(text)).toBe(true);
    expect((await client.getData('/d')).data.equals(text)).toBe(true);
    expect((await client.getData('/d', { decompressed: false })).data[0]).toBe(0x1f);
    await client.setData('/d', 'raw', { compressed: false });
    expect((await plain.getData('/d')).data.toString()).toBe('raw');
    await client.transaction().create('/t', text).setData('/t', 'second').commit();
    expect(gunzipSync((await plain.getData('/t')).data).toString()).toBe('second');
    const [r] = await client
      .multiRead([
        { type: 'getData', path: '/d', decompressed: false },
        { type: 'getData', path: '/t' },
      ])
      .then((rs) => [rs[0], rs[1]]);
    expect(r?.type === 'getData' && r.data.toString()).toBe('raw');
  });

  it('a custom provider, sync or async, gets the path (filtered compression)', async () => {
    const seen: string[] = [];
    const reverse: CompressionProvider = {
      compress: (data, path) => (seen.push(`c ${path}`), Buffer.from(data).reverse()),
      decompress: async (data, path) => (seen.push(`d ${path}`), Buffer.from(data).reverse()),
    };
    const client = await open({ compression: reverse });
    await client.create('/r', 'abc', { compressed: true });
    expect((await client.getData('/r')).data.toString()).toBe('cba');
    expect((await client.getData('/r', { decompressed: true })).data.toString()).toBe('abc');
    expect(seen).toEqual(['c /r', 'd /r']);
  });

  it('transactions compress their create and setData ops; multiRead decompresses the getData ops that ask', async () => {
    const client = await open();
    const results = await client
      .transaction()
      .create('/x', text, { compressed: true })
      .create('/y', 'plain')
      .setData('/y', text, { compressed: true })
      .check('/x', 0)
      .commit();
    expect(results.map((r) => r.type)).toEqual(['create', 'create', 'setData', 'check']);
    const got = await client.multiRead([
      { type: 'getData', path: '/x', decompressed: true },
      { type: 'getData', path: '/y' },
      { type: 'getChildren', path: '/' },
    ]);
    expect(got[0]?.type === 'getData' && got[0].data.equals(text)).toBe(true);
    expect(got[1]?.type === 'getData' && gunzipSync(got[1].data).equals(text)).toBe(true);
  });

  it('the size limit counts the compressed bytes', async () => {
    const client = await open({ maxBufferBytes: 64 * 1024 });
    const big = Buffer.alloc(1_000_000, 'a');
    await expect(client.create('/big', big)).rejects.toBeInstanceOf(DataTooLargeError);
    await client.create('/big', big, { compressed: true });
    expect((await client.getData('/big', { decompressed: true })).data.equals(big)).toBe(true);
    await expect(client.transaction().create('/big2', big, { compressed: true }).commit()).resolves.toHaveLength(1);
    await expect(client.create('/big3', randomBytes(100_000), { compressed: true })).rejects.toBeInstanceOf(DataTooLargeError);
  });

  it('errors: uncompressed data read with decompressed is DecompressionError with the path; a throwing provider is CompressionError and nothing is written', async () => {
    const client = await open();
    await client.create('/plain', 'not compressed');
    const err = await client.getData('/plain', { decompressed: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecompressionError);
    expect(err).toBeInstanceOf(TenureError);
    expect(err).toMatchObject({ code: 'BAD_COMPRESSED_DATA', path: '/plain', name: 'DecompressionError' });
    expect((err as Error).message).toContain('/plain');
    // A node with no data reads as no data.
    await client.create('/empty');
    expect((await client.getData('/empty', { decompressed: true })).data.length).toBe(0);

    const failing = await open({
      compression: {
        compress: () => {
          throw new TypeError('boom');
        },
        decompress: () => Promise.reject(new TypeError('bang')),
      },
    });
    const c = await failing.create('/never', 'x', { compressed: true }).catch((e: unknown) => e);
    expect(c).toBeInstanceOf(CompressionError);
    expect(c).toMatchObject({ code: 'COMPRESSION_FAILED', path: '/never' });
    expect(await client.exists('/never')).toBeNull();
    const t = await failing
      .transaction()
      .create('/never', 'x', { compressed: true })
      .commit()
      .catch((e: unknown) => e);
    expect(t).toBeInstanceOf(CompressionError);
    const d = await failing.getData('/plain', { decompressed: true }).catch((e: unknown) => e);
    expect(d).toMatchObject({ code: 'BAD_COMPRESSED_DATA', path: '/plain' });
    expect((d as Error).cause).toBeInstanceOf(TypeError);
  });

  it('a provider without its methods is refused at createClient', async () => {
    await expect(open({ compression: { compress: () => new Uint8Array() } as unknown as CompressionProvider })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
