import { describe, expect, test } from 'vitest';
import { InvalidPathError, InvalidArgumentError } from '@tenure/protocol';
import { parseConnectString, zookeeper } from '@tenure/zookeeper';

describe('connect strings', () => {
  test('hosts with and without ports, default 2181, chroot', () => {
    expect(parseConnectString('h1:2182,h2/app/x')).toEqual({ hosts: ['h1:2182', 'h2:2181'], chroot: '/app/x' });
    expect(parseConnectString(' a:1 , b:2 ')).toEqual({ hosts: ['a:1', 'b:2'], chroot: '' });
    expect(parseConnectString('[::1]:2281,[fe80::1]/c')).toEqual({ hosts: ['[::1]:2281', '[fe80::1]:2181'], chroot: '/c' });
  });

  test('a chroot of "/" means none', () => {
    expect(parseConnectString('h:1/').chroot).toBe('');
  });

  test('bad chroots and host lists are refused with typed errors', () => {
    expect(() => parseConnectString('h:1/a/')).toThrow(InvalidPathError);
    expect(() => parseConnectString('h:1/a/../b')).toThrow(InvalidPathError);
    expect(() => parseConnectString('/app')).toThrow(InvalidArgumentError);
    expect(() => parseConnectString('h:0')).toThrow(InvalidArgumentError);
    expect(() => parseConnectString('h:99999')).toThrow(InvalidArgumentError);
    expect(() => parseConnectString('h:x')).toThrow(InvalidArgumentError);
    expect(() => parseConnectString('::1:2181')).toThrow(/brackets/);
  });

  test('the transport exposes hosts and chroot; bad options are refused', () => {
    const t = zookeeper('a:1,b:2/ns');
    expect(t.hosts).toEqual(['a:1', 'b:2']);
    expect(t.chroot).toBe('/ns');
    expect(() => zookeeper('a:1', { maxFrameBytes: 0 })).toThrow(InvalidArgumentError);
  });
});

describe('xids', () => {
  test('count up from 1 and wrap from 2^31-1 back to 1, never 0 or negative', async () => {
    const { followingXid } = await import('../src/connection.js');
    expect(followingXid(0)).toBe(1);
    expect(followingXid(1)).toBe(2);
    expect(followingXid(0x7ffffffe)).toBe(0x7fffffff);
    expect(followingXid(0x7fffffff)).toBe(1);
    expect(followingXid(-8)).toBe(1);
  });
});
