/** The KeeperError family (wire doc §5), client-side errors, ACL helpers and digest ids (§8). */
import { describe, expect, it } from 'vitest';
import {
  AbortError,
  BadVersionError,
  ClosedError,
  ConnectionLossError,
  CREATOR_ALL_ACL,
  ErrorCode,
  FrameLengthError,
  KeeperError,
  NoNodeError,
  NodeExistsError,
  OPEN_ACL_UNSAFE,
  Perms,
  ProtocolError,
  READ_ACL_UNSAFE,
  SessionExpiredError,
  TimeoutError,
  UnknownOpError,
  digestFromAuth,
  digestId,
  errorCodeName,
  isRetryableCode,
} from '@tenure/protocol';

describe('KeeperError', () => {
  const codes = Object.entries(ErrorCode).filter(([, c]) => c !== 0 && c !== -1 && c !== -100);

  it.each(codes)('KeeperError.from(%s) is a subclass with code, path and message', (name, code) => {
    const e = KeeperError.from(code, '/a/b');
    expect(e).toBeInstanceOf(KeeperError);
    expect(e).toBeInstanceOf(Error);
    expect(e.constructor).not.toBe(KeeperError);
    expect(e.keeperCode).toBe(code);
    expect(e.path).toBe('/a/b');
    expect(e.codeName).toBe(name);
    expect(e.message).toContain(name);
    expect(e.message).toContain('/a/b');
    expect(e.name).toMatch(/Error$/);
    expect(e.name).not.toBe('KeeperError');
  });

  it('specific subclasses', () => {
    expect(KeeperError.from(-101, '/x')).toBeInstanceOf(NoNodeError);
    expect(KeeperError.from(-110)).toBeInstanceOf(NodeExistsError);
    expect(KeeperError.from(-103)).toBeInstanceOf(BadVersionError);
    expect(KeeperError.from(-112)).toBeInstanceOf(SessionExpiredError);
    expect(new ConnectionLossError()).toBeInstanceOf(KeeperError);
    expect(new ConnectionLossError().keeperCode).toBe(-4);
    expect(new NoNodeError('/p').message).toBe('NONODE: no node (/p)');
    expect(new NoNodeError('/p').name).toBe('NoNodeError');
    expect(KeeperError.from(-101, '/p', 'while locking').message).toBe('NONODE: no node (/p): while locking');
  });

  it('unknown codes give a generic KeeperError', () => {
    const e = KeeperError.from(-999, '/x');
    expect(e.constructor).toBe(KeeperError);
    expect(e.keeperCode).toBe(-999);
    expect(e.message).toContain('UNKNOWN(-999)');
    expect(errorCodeName(-101)).toBe('NONODE');
  });

  it('every code of wire doc §5 is known', () => {
    const doc = [
      0, -1, -2, -3, -4, -5, -6, -7, -8, -12, -13, -14, -100, -101, -102, -103, -108, -110, -111, -112, -113, -114, -115, -118, -119, -120,
      -121, -122, -123, -124, -125, -127,
    ];
    expect(Object.values(ErrorCode).sort((a, b) => a - b)).toEqual(doc.sort((a, b) => a - b));
  });

  it('retryable codes', () => {
    expect(isRetryableCode(-4)).toBe(true);
    expect(isRetryableCode(-7)).toBe(true);
    expect(isRetryableCode(-101)).toBe(false);
  });
});

describe('client-side errors', () => {
  it('are typed and named', () => {
    expect(new ProtocolError('bad').name).toBe('ProtocolError');
    expect(new ProtocolError('bad').header).toBeUndefined();
    expect(new ProtocolError('bad', { header: { xid: 1, type: 4 } }).header).toEqual({ xid: 1, type: 4 });
    const unknown = new UnknownOpError({ xid: 9, type: 77 });
    expect(unknown).toBeInstanceOf(ProtocolError);
    expect(unknown.name).toBe('UnknownOpError');
    expect(unknown.header).toEqual({ xid: 9, type: 77 });
    expect(unknown.opType).toBe(77);
    const len = new FrameLengthError(-1, 100, Buffer.from('ffffffff', 'hex'));
    expect(len).toBeInstanceOf(ProtocolError);
    expect(len.message).toContain('negative');
    expect(new TimeoutError('late', 50).timeoutMs).toBe(50);
    expect(new AbortError().name).toBe('AbortError');
    expect(new ClosedError('client').message).toBe('client is closed');
  });
});

describe('ACLs and digest', () => {
  it('digestId(bob, secret)', () => {
    expect(digestId('bob', 'secret')).toEqual({ scheme: 'digest', id: 'bob:fyVmFCwVbTJYrznoSu1koqYEYF0=' });
    expect(digestId('super', 'admin').id).toBe('super:xQJmxLMiHGwaqBvst5y6rkB6HQs=');
    expect(digestFromAuth('bob:secret')).toBe('bob:fyVmFCwVbTJYrznoSu1koqYEYF0=');
  });

  it('well-known lists', () => {
    expect(OPEN_ACL_UNSAFE).toEqual([{ perms: Perms.ALL, id: { scheme: 'world', id: 'anyone' } }]);
    expect(READ_ACL_UNSAFE).toEqual([{ perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } }]);
    expect(CREATOR_ALL_ACL).toEqual([{ perms: 31, id: { scheme: 'auth', id: '' } }]);
    expect(Object.isFrozen(OPEN_ACL_UNSAFE)).toBe(true);
  });
});
