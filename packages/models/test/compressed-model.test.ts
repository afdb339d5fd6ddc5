/**
 * `compressed`: a model's nodes written and read through the client's compression provider
 * (Curator's CreateOption.compress / uncompress), as its reads, updates, watches, lists and cache
 * see them; without the option a model follows the client's `byDefault`, as ModeledFramework
 * follows `compressionEnabled()`.
 */
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { gzip, type Client } from '@tenure/client';
import type { EmbeddedServer } from '@tenure/server';
import { TestClients, startTestServer } from '@tenure/testing';
import { ModelValidationError, model } from '@tenure/models';

const Doc = z.object({ title: z.string(), body: z.string() });
const doc = { title: 'state', body: 'x'.repeat(2000) };

let server: EmbeddedServer;
let clients: TestClients;
let client: Client;

beforeEach(async () => {
  server = startTestServer();
  clients = new TestClients(() => server.transport());
  client = await clients.open();
});
afterEach(async () => {
  await clients.closeAll();
  await server.close();
});

/** The node's bytes as the server holds them. */
const stored = (path: string): Buffer => server.node(path)!.data ?? Buffer.alloc(0);
const isGzip = (b: Buffer): boolean => b[0] === 0x1f && b[1] === 0x8b;

describe('a compressed model', () => {
  it('set() stores gzip of the JSON; read(), update(), list() and watch() decompress', async () => {
    const docs = model(client, '/docs/{id}', { schema: Doc, compressed: true });
    const node = docs.at({ id: 'a' });
    await node.set(doc);
    expect(isGzip(stored('/docs/a'))).toBe(true);
    expect(stored('/docs/a').length).toBeLessThan(200);
    expect(JSON.parse(gunzipSync(stored('/docs/a')).toString('utf8'))).toEqual(doc);
    expect((await node.read()).value).toEqual(doc);
    await node.update((d) => ({ ...d, title: 'next' }));
    expect(isGzip(stored('/docs/a'))).toBe(true);
    expect((await node.read()).value.title).toBe('next');
    expect((await docs.list()).map((d) => d.value.title)).toEqual(['next']);
    await using watch = node.watch();
    expect((await watch.next()).value).toMatchObject({ value: { title: 'next' } });
    await node.set({ ...doc, title: 'third' }); // set on an existing node: setData, compressed too
    expect((await watch.next()).value).toMatchObject({ value: { title: 'third' } });
    expect(isGzip(stored('/docs/a'))).toBe(true);
  });

  it('the cached variant reads with decompressed', async () => {
    await model(client, '/docs/{id}', { schema: Doc, compressed: true }).at({ id: 'b' }).set(doc);
    await using cached = model(client, '/docs/{id}', { schema: Doc, compressed: true }).cached();
    await cached.start();
    expect(cached.get({ id: 'b' })?.value).toEqual(doc);
  });

  it('an uncompressed reader of a compressed node gets the ModelValidationError (gzip is not JSON)', async () => {
    await model(client, '/docs/{id}', { schema: Doc, compressed: true }).at({ id: 'c' }).set(doc);
    await expect(model(client, '/docs/{id}', { schema: Doc }).at({ id: 'c' }).read()).rejects.toBeInstanceOf(ModelValidationError);
  });

  it("without the option a model follows the client's byDefault; compressed: false opts out", async () => {
    const always = await clients.open({ compression: { provider: gzip(), byDefault: true } });
    await model(always, '/docs/{id}', { schema: Doc }).at({ id: 'd' }).set(doc);
    expect(isGzip(stored('/docs/d'))).toBe(true);
    expect((await model(always, '/docs/{id}', { schema: Doc }).at({ id: 'd' }).read()).value).toEqual(doc);
    await model(always, '/docs/{id}', { schema: Doc, compressed: false }).at({ id: 'e' }).set(doc);
    expect(JSON.parse(stored('/docs/e').toString('utf8'))).toEqual(doc);
    expect((await model(client, '/docs/{id}', { schema: Doc }).at({ id: 'e' }).read()).value).toEqual(doc);
  });
});
