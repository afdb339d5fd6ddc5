/**
 * One error family: every error class any @tenure/* package exports is a TenureError with a
 * non-empty string `code`, even when built with no arguments. The packages are found on disk, so a
 * new package is covered without editing this file.
 */
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, KeeperError, NoNodeError, TenureError, errorCodeName } from '@tenure/protocol';
import * as client from '@tenure/client';

const root = fileURLToPath(new URL('../../packages/', import.meta.url));
const packages = readdirSync(root).filter((p) => existsSync(`${root}${p}/src/index.ts`));

type ErrorClass = new () => Error;

/** Every exported Error subclass of every package, once, with the packages that export it. */
async function exportedErrorClasses(): Promise<Map<ErrorClass, string[]>> {
  const found = new Map<ErrorClass, string[]>();
  for (const p of packages) {
    const entry = (await import(`@tenure/${p}`)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(entry)) {
      if (typeof value !== 'function' || !(value.prototype instanceof Error)) continue;
      const where = found.get(value as ErrorClass) ?? [];
      where.push(`${p}.${name}`);
      found.set(value as ErrorClass, where);
    }
  }
  return found;
}

describe('every exported error class', async () => {
  const classes = await exportedErrorClasses();
  const cases = [...classes].map(([C, where]) => [where.join(', '), C] as const);

  it('finds the packages and their errors', () => {
    expect(packages).toEqual(expect.arrayContaining(['protocol', 'client', 'locks', 'leader', 'nodes', 'server', 'cli']));
    expect(classes.size).toBeGreaterThan(40);
  });

  it.each(cases)('%s: a TenureError with a string code, built with no arguments', (_where, C) => {
    const e = new C();
    expect(e).toBeInstanceOf(TenureError);
    expect(e).toBeInstanceOf(C);
    const code = (e as TenureError).code;
    expect(typeof code).toBe('string');
    expect(code.length).toBeGreaterThan(0);
    expect(e.name).toBe(C.name);
    expect(e.message.length).toBeGreaterThan(0);
  });

  it('@tenure/client re-exports the base of the family', () => {
    expect(client.TenureError).toBe(TenureError);
    expect(new client.IllegalStateError().code).toBe('ILLEGAL_STATE');
    expect(new client.InvalidArgumentError().code).toBe('INVALID_ARGUMENT');
  });
});

describe('KeeperError codes', () => {
  it('KeeperError.from(-101) is a NoNodeError with code NONODE and keeperCode -101', () => {
    const e = KeeperError.from(-101, '/a');
    expect(e).toBeInstanceOf(NoNodeError);
    expect(e).toBeInstanceOf(TenureError);
    expect(e.code).toBe('NONODE');
    expect(e.keeperCode).toBe(-101);
    expect(new NoNodeError().code).toBe('NONODE');
  });

  it.each(Object.entries(ErrorCode).filter(([, c]) => c !== 0))(
    'KeeperError.from(%s): code is the name, keeperCode the number',
    (name, n) => {
      const e = KeeperError.from(n);
      expect(e.code).toBe(name);
      expect(e.code).toBe(errorCodeName(n));
      expect(e.keeperCode).toBe(n);
    },
  );

  it('a number ZooKeeper does not know keeps it in keeperCode', () => {
    const e = KeeperError.from(-999);
    expect(e.code).toBe('UNKNOWN');
    expect(e.keeperCode).toBe(-999);
    expect(e.codeName).toBe('UNKNOWN(-999)');
  });
});
