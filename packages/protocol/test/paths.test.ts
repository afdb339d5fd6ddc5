/** Path rules of docs/zookeeper-wire-protocol.md §6.7 and the path helpers. */
import { describe, expect, it } from 'vitest';
import {
  InvalidPathError,
  ancestors,
  joinPath,
  nodeName,
  parentPath,
  pathProblem,
  prependChroot,
  sequenceSuffix,
  stripChroot,
  validatePath,
} from '@tenure/protocol';

describe('validatePath', () => {
  it.each(['/', '/a', '/a/b/c', '/...', '/.a', '/a.', '/a/..b', '/zookeeper/config', '/ü/日本', '/a b', '/\u00a0', '/\uffef', '/\uf900'])(
    'accepts %j',
    (p) => {
      expect(validatePath(p)).toBe(p);
      expect(pathProblem(p)).toBeUndefined();
    },
  );

  it.each([
    ['', 'empty'],
    ['a', 'start with /'],
    ['a/b', 'start with /'],
    ['/a/', 'end with /'],
    ['//', 'end with /'],
    ['/a//b', 'empty node name'],
    ['//a', 'empty node name'],
    ['/.', 'relative'],
    ['/..', 'relative'],
    ['/a/./b', 'relative'],
    ['/a/../b', 'relative'],
    ['/a/.', 'relative'],
    ['/a\u0000b', 'invalid character'],
    ['/a\u0001', 'invalid character'],
    ['/a\u001f', 'invalid character'],
    ['/a\u007f', 'invalid character'],
    ['/a\u009f', 'invalid character'],
    ['/a\ud800', 'invalid character'],
    ['/a\udfff', 'invalid character'],
    ['/a\ue000', 'invalid character'],
    ['/a\uf8ff', 'invalid character'],
    ['/a\ufff0', 'invalid character'],
    ['/a\uffff', 'invalid character'],
    ['/\ud83d\ude00', 'invalid character'],
  ])('refuses %j (%s)', (p, reason) => {
    let err: unknown;
    try {
      validatePath(p);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidPathError);
    const e = err as InvalidPathError;
    expect(e.path).toBe(p);
    expect(e.reason).toContain(reason);
    expect(e.message).toContain(JSON.stringify(p));
  });

  it('refuses a non-string', () => {
    expect(() => validatePath(undefined as unknown as string)).toThrow(InvalidPathError);
    expect(pathProblem(42)).toBe('path must be a string');
  });

  it('a sequential path may end with / (the name is then digits only)', () => {
    expect(validatePath('/r/', true)).toBe('/r/');
    expect(validatePath('/', true)).toBe('/');
    expect(validatePath('/lock-', true)).toBe('/lock-');
    expect(() => validatePath('/r/')).toThrow(InvalidPathError);
    // Other rules still apply to sequential paths.
    expect(() => validatePath('/a//', true)).toThrow(InvalidPathError);
    expect(() => validatePath('/./', true)).toThrow(InvalidPathError);
    expect(() => validatePath('r/', true)).toThrow(InvalidPathError);
  });
});

describe('path helpers', () => {
  it('parentPath, nodeName, joinPath, ancestors', () => {
    expect(parentPath('/a/b')).toBe('/a');
    expect(parentPath('/a')).toBe('/');
    expect(parentPath('/')).toBe('');
    expect(nodeName('/a/b')).toBe('b');
    expect(nodeName('/')).toBe('');
    expect(joinPath('/', 'a')).toBe('/a');
    expect(joinPath('/a', 'b/c')).toBe('/a/b/c');
    expect(joinPath('/a', '/b')).toBe('/a/b');
    expect(joinPath('/a', '')).toBe('/a');
    expect(ancestors('/a/b/c')).toEqual(['/', '/a', '/a/b']);
    expect(ancestors('/')).toEqual([]);
  });

  it('chroot: prepend and strip by the 3.9 rule', () => {
    expect(prependChroot('/app', '/')).toBe('/app');
    expect(prependChroot('/app', '/x')).toBe('/app/x');
    expect(prependChroot('/', '/x')).toBe('/x');
    expect(prependChroot('', '/x')).toBe('/x');
    expect(stripChroot('/app', '/app')).toBe('/');
    expect(stripChroot('/app', '/app/x')).toBe('/x');
    expect(stripChroot('/app', '/apple')).toBe('/apple');
    expect(stripChroot('/app', '/zookeeper/config')).toBe('/zookeeper/config');
  });

  it('sequenceSuffix is %010d', () => {
    expect(sequenceSuffix(0)).toBe('0000000000');
    expect(sequenceSuffix(42)).toBe('0000000042');
    expect(sequenceSuffix(2147483647)).toBe('2147483647');
    expect(sequenceSuffix(-2147483648)).toBe('-2147483648');
  });
});
