/**
 * DIGEST-MD5: the arithmetic against RFC 2831's worked examples (§4), the client and the server
 * of this module against each other, every refusal, and the SASL frames on the wire (OpCode.sasl).
 */
import { describe, expect, it } from 'vitest';
import {
  DigestMd5Client,
  DigestMd5Server,
  OpCode,
  SaslError,
  decodeReply,
  decodeRequest,
  digestMd5Response,
  digestMd5ResponseAuth,
  encodeReply,
  encodeRequest,
  formatDirectives,
  parseDirectives,
  type GetSASLRequest,
} from '@tenure/protocol';

const text = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('RFC 2831 §4 worked examples', () => {
  // The IMAP example: user chris, password secret.
  const imap = {
    username: 'chris',
    realm: 'elwood.innosoft.com',
    password: 'secret',
    nonce: 'OA6MG9tEQGm2hh',
    cnonce: 'OA6MHXh6VqTrRk',
    nc: '00000001',
    digestUri: 'imap/elwood.innosoft.com',
  };
  // The ACAP example, same user.
  const acap = { ...imap, nonce: 'OA9BSXrbuRhWay', cnonce: 'OA9BSuZWMSpW8m', digestUri: 'acap/elwood.innosoft.com' };

  it('computes response and rspauth of the IMAP example', () => {
    expect(digestMd5Response(imap)).toBe('d388dad90d4bbd760a152321f2143af7');
    expect(digestMd5ResponseAuth(imap)).toBe('ea40f60335c427b5527b84dbabcdfffd');
  });

  it('computes response and rspauth of the ACAP example', () => {
    expect(digestMd5Response(acap)).toBe('6084c6db3fede7352c551284490fd0fc');
    expect(digestMd5ResponseAuth(acap)).toBe('2f0b3d7c3c2e486600ef710726aa2eae');
  });

  it('the client answers the IMAP challenge with the RFC bytes and accepts its rspauth', () => {
    const c = new DigestMd5Client({
      username: 'chris',
      password: 'secret',
      authzid: '',
      protocol: 'imap',
      serverName: 'elwood.innosoft.com',
      cnonce: imap.cnonce,
    });
    expect(c.initialResponse()).toHaveLength(0);
    const challenge = 'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8';
    const answer = text(c.evaluateChallenge(bytes(challenge)));
    expect(answer).toBe(
      'charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",nc=00000001,cnonce="OA6MHXh6VqTrRk",' +
        'digest-uri="imap/elwood.innosoft.com",maxbuf=65536,response=d388dad90d4bbd760a152321f2143af7,qop=auth',
    );
    expect(c.complete).toBe(false);
    expect(c.evaluateChallenge(bytes('rspauth=ea40f60335c427b5527b84dbabcdfffd'))).toBeNull();
    expect(c.complete).toBe(true);
  });

  it('the server verifies the RFC response and answers the RFC rspauth', () => {
    const s = new DigestMd5Server({
      passwordOf: (u) => (u === 'chris' ? 'secret' : undefined),
      realm: 'elwood.innosoft.com',
      protocol: 'imap',
      serverName: 'elwood.innosoft.com',
      nonce: imap.nonce,
    });
    expect(parseDirectives(text(s.challenge())).get('nonce')).toEqual([imap.nonce]);
    const ok = s.verify(
      bytes(
        'charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",nc=00000001,cnonce="OA6MHXh6VqTrRk",' +
          'digest-uri="imap/elwood.innosoft.com",response=d388dad90d4bbd760a152321f2143af7,qop=auth',
      ),
    );
    expect(text(ok.token)).toBe('rspauth=ea40f60335c427b5527b84dbabcdfffd');
    expect(ok.authenticationId).toBe('chris');
  });
});

describe('directives', () => {
  it('parses tokens, quoted strings with escapes, spaces, empty elements and repeated realms', () => {
    const d = parseDirectives(' realm="a",realm="b\\"c" , ,nonce="x,y",  qop = "auth,auth-int",algorithm=md5-sess,');
    expect(d.get('realm')).toEqual(['a', 'b"c']);
    expect(d.get('nonce')).toEqual(['x,y']);
    expect(d.get('qop')).toEqual(['auth,auth-int']);
    expect(d.get('algorithm')).toEqual(['md5-sess']);
  });

  it.each(['realm', 'realm=', 'realm="x', 'realm="x" nonce="y"', '=x', 'a=b;c=d'])('refuses %j', (s) => {
    if (s === 'realm=') expect(parseDirectives(s).get('realm')).toEqual(['']);
    else expect(() => parseDirectives(s)).toThrow(SaslError);
  });

  it('quotes and escapes what it is told to', () => {
    expect(
      formatDirectives(
        [
          ['username', 'a"b\\c'],
          ['nc', '00000001'],
        ],
        new Set(['username']),
      ),
    ).toBe('username="a\\"b\\\\c",nc=00000001');
  });
});

describe('client against server (ZooKeeper defaults)', () => {
  const users: Record<string, string> = { bob: 'secret', jürgen: 'pässwörd', 名前: 'パスワード' };
  const server = (): DigestMd5Server => new DigestMd5Server({ passwordOf: (u) => users[u] });

  function exchange(
    username: string,
    password: string,
    s = server(),
  ): { client: DigestMd5Client; result: ReturnType<DigestMd5Server['verify']> } {
    const client = new DigestMd5Client({ username, password });
    const challenge = s.challenge();
    const response = client.evaluateChallenge(challenge)!;
    const result = s.verify(response);
    expect(client.evaluateChallenge(result.token)).toBeNull();
    expect(client.complete).toBe(true);
    return { client, result };
  }

  it("authenticates bob, with ZooKeeper's realm, digest-uri and authzid", () => {
    const s = server();
    const challenge = text(s.challenge());
    expect(challenge).toMatch(/^realm="zk-sasl-md5",nonce="[A-Za-z0-9+/=]{44}",qop="auth",charset=utf-8,algorithm=md5-sess$/);
    const c = new DigestMd5Client({ username: 'bob', password: 'secret' });
    const response = parseDirectives(text(c.evaluateChallenge(bytes(challenge))));
    expect(response.get('digest-uri')).toEqual(['zookeeper/zk-sasl-md5']);
    expect(response.get('realm')).toEqual(['zk-sasl-md5']);
    expect(response.get('authzid')).toEqual(['bob']);
    expect(response.get('response')![0]).toMatch(/^[0-9a-f]{32}$/);
  });

  it.each(Object.keys(users))('authenticates %s (8859-1 and UTF-8 credentials)', (u) => {
    expect(exchange(u, users[u]!).result.authenticationId).toBe(u);
  });

  it('refuses a wrong password and an unknown user alike', () => {
    const msg = /Mismatched response/;
    expect(() => exchange('bob', 'wrong')).toThrow(msg);
    expect(() => exchange('mallory', 'secret')).toThrow(msg);
  });

  it('refuses a response to another nonce, a replay, a wrong digest-uri and a second verify', () => {
    const s1 = server();
    const s2 = server();
    const c = new DigestMd5Client({ username: 'bob', password: 'secret' });
    const r1 = c.evaluateChallenge(s1.challenge())!;
    s2.challenge();
    expect(() => s2.verify(r1)).toThrow(/nonce does not match/);
    expect(s1.verify(r1).authenticationId).toBe('bob');
    expect(() => s1.verify(r1)).toThrow(SaslError);
    const s3 = server();
    const other = new DigestMd5Client({ username: 'bob', password: 'secret', serverName: 'elsewhere' });
    expect(() => s3.verify(other.evaluateChallenge(s3.challenge())!)).toThrow(/digest-uri/);
    expect(() => server().verify(bytes('username="bob"'))).toThrow(SaslError);
  });

  it('the client refuses a server that does not know the password, and bad challenges', () => {
    const s = new DigestMd5Server({ passwordOf: () => 'not-the-password' });
    const c = new DigestMd5Client({ username: 'bob', password: 'secret' });
    c.evaluateChallenge(s.challenge());
    const forged = digestMd5ResponseAuth({
      username: 'bob',
      realm: 'zk-sasl-md5',
      password: 'guess',
      nonce: 'n',
      cnonce: 'c',
      nc: '00000001',
      digestUri: 'zookeeper/zk-sasl-md5',
    });
    expect(() => c.evaluateChallenge(bytes(`rspauth=${forged}`))).toThrow(/rspauth does not match/);
    expect(c.complete).toBe(false);
    for (const bad of [
      'nonce="x",algorithm=md5',
      'realm="r"',
      'nonce="x",algorithm=md5-sess,qop="auth-conf"',
      'nonce="x",nonce="y",algorithm=md5-sess',
      '\xff',
    ]) {
      const t = bad === '\xff' ? Uint8Array.of(0xff, 0xfe) : bytes(bad);
      expect(() => new DigestMd5Client({ username: 'bob', password: 'x' }).evaluateChallenge(t)).toThrow(SaslError);
    }
  });
});

describe('OpCode.sasl on the wire', () => {
  it('GetSASLRequest is RequestHeader{xid, 102} + buffer token; SetSASLResponse is ReplyHeader + buffer token', () => {
    const req: GetSASLRequest = { type: OpCode.sasl, token: Buffer.alloc(0) };
    const bytesOut = encodeRequest(1, req);
    expect(bytesOut.toString('hex')).toBe('00000001' + '00000066' + '00000000');
    expect(decodeRequest(bytesOut).request).toEqual(req);
    const reply = encodeReply({ xid: 1, zxid: 0n, err: 0 }, OpCode.sasl, { token: Buffer.from('rspauth=x') });
    expect(decodeReply(reply, OpCode.sasl).response).toEqual({ token: Buffer.from('rspauth=x') });
    // ZooKeeper's refusal: err AUTHFAILED followed by a null token, which a client ignores.
    const refusal = Buffer.concat([encodeReply({ xid: 2, zxid: 0n, err: -115 }, OpCode.sasl), Buffer.from('ffffffff', 'hex')]);
    expect(decodeReply(refusal, OpCode.sasl)).toEqual({ header: { xid: 2, zxid: 0n, err: -115 }, response: undefined });
    // A server writes that refusal when it gives the null token; without one, the header alone.
    expect(encodeReply({ xid: 2, zxid: 0n, err: -115 }, OpCode.sasl, { token: null })).toEqual(refusal);
    expect(encodeReply({ xid: 2, zxid: 0n, err: -115 }, OpCode.sasl)).toHaveLength(16);
  });
});
