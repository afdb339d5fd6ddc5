/** The client README's "Errors" table says what the classes do: each listed code is the class's own. */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as client from '@tenure/client';
import * as protocol from '@tenure/protocol';

const readme = readFileSync(new URL('../../packages/client/README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## Errors'), readme.indexOf('\n## ', readme.indexOf('## Errors') + 1));
const rows = [...section.matchAll(/^\| `'([A-Z_]+)'` +\| `(\w+)`/gm)].map((m) => [m[1]!, m[2]!] as const);
const exported = { ...protocol, ...client } as Record<string, unknown>;

type ErrorClass = new () => protocol.TenureError;
const isErrorClass = (v: unknown): v is ErrorClass => typeof v === 'function' && v.prototype instanceof Error;

describe('the client README lists the codes', () => {
  it('has a table', () => {
    expect(rows.length).toBeGreaterThan(25);
  });

  it.each(rows)('%s is the code of %s', (code, name) => {
    const C = exported[name];
    expect(isErrorClass(C), `${name} is an exported error class`).toBe(true);
    if (C === protocol.TlsError) expect(Object.values(protocol.tlsErrorCodes)).toContain(code);
    else if (C !== protocol.TenureError) expect(new (C as ErrorClass)().code).toBe(code);
  });

  it("lists every client error class's code (KeeperError subclasses under 'other ZooKeeper names')", () => {
    const listed = new Set(rows.map(([code]) => code));
    for (const [name, C] of Object.entries(client)) {
      if (!isErrorClass(C) || C === client.TenureError || C === client.TlsError || C === client.TransactionError) continue;
      const e = new C();
      if (e instanceof client.KeeperError && e.code !== 'DATA_TOO_LARGE' && e.code === protocol.errorCodeName(e.keeperCode)) continue;
      expect(listed.has(e.code), `${name} (${e.code})`).toBe(true);
    }
  });

  it("names every recipe package's codes", async () => {
    const root = fileURLToPath(new URL('../../packages/', import.meta.url));
    const mentioned = new Set([...section.matchAll(/`'([A-Z_]+)'`/g)].map((m) => m[1]!));
    for (const p of ['barriers', 'counters', 'discovery', 'leader', 'locks', 'nodes', 'queues'].filter((p) => existsSync(`${root}${p}`))) {
      const entry = (await import(`@tenure/${p}`)) as Record<string, unknown>;
      for (const [name, C] of Object.entries(entry)) {
        if (!isErrorClass(C) || C.name in exported) continue;
        expect(mentioned.has(new C().code), `${p}.${name}`).toBe(true);
      }
    }
  });
});
