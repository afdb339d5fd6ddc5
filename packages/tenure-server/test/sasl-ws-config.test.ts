/**
 * tenure-server's SASL and WebSocket keys: the JAAS Server section's DigestLoginModule users (as
 * ZooKeeper reads them), a users file, errors naming the key and the file, and the WebSocket
 * port, address, path and origins into createEmbeddedServer / listen options.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ConfigError } from '../src/config.js';
import { loadSettings, serverOptions } from '../src/main.js';
import { jaasServerUsers, parseJaas } from '../src/sasl-users.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-sasl-cfg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(text: string, name = `f${n++}`): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
const configError = (f: () => unknown): ConfigError => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('no ConfigError was thrown');
};

// As ZooKeeper's SASL guide and Debian's notes write it: a Server and a Client section, comments.
const JAAS = `
/* ZooKeeper's server side */
Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_super="adminsecret"
       user_bob="bob's \\"secret\\""
       user_alice=alicesecret;
};
// the Java client's side
Client {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       username="bob"
       password="secret";
};
`;

describe('JAAS', () => {
  test("the Server section's DigestLoginModule user_* options are the users", () => {
    expect(jaasServerUsers(JAAS)).toEqual({ super: 'adminsecret', bob: 'bob\'s "secret"', alice: 'alicesecret' });
    const sections = parseJaas(JAAS);
    expect([...sections.keys()]).toEqual(['Server', 'Client']);
    expect(sections.get('Client')![0]).toEqual({
      loginModule: 'org.apache.zookeeper.server.auth.DigestLoginModule',
      flag: 'required',
      options: { username: 'bob', password: 'secret' },
    });
  });

  test('no Server section, no DigestLoginModule (Kerberos only), no users, bad syntax: a clear reason', () => {
    expect(() => jaasServerUsers('Client { M required a="b"; };')).toThrow(/no Server section/);
    expect(() => jaasServerUsers('Server { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };')).toThrow(
      /no DigestLoginModule entry \(com\.sun\.security\.auth\.module\.Krb5LoginModule\); tenure-server serves DIGEST-MD5 only/,
    );
    expect(() => jaasServerUsers('Server { org.apache.zookeeper.server.auth.DigestLoginModule required; };')).toThrow(/no user_<name>/);
    expect(() => jaasServerUsers('Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_a="x"')).toThrow(
      /the file ends/,
    );
    expect(() => jaasServerUsers('Server { M required user_a="x; };')).toThrow(/unterminated quoted value/);
  });
});

describe('SASL keys', () => {
  test('java.security.auth.login.config (or --jaas-config) gives createEmbeddedServer its sasl users', () => {
    const jaas = file(JAAS);
    const { settings } = loadSettings(['--config', file(`clientPort=0\njava.security.auth.login.config=${jaas}\n`)]);
    expect(serverOptions(settings, undefined).sasl).toEqual({
      users: { super: 'adminsecret', bob: 'bob\'s "secret"', alice: 'alicesecret' },
    });
    expect(loadSettings(['--jaas-config', jaas]).settings.saslUsers).toMatchObject({ bob: expect.any(String) });
  });

  test('sasl.usersFile (or --sasl-users-file): name=password lines; it wins over JAAS for a name in both', () => {
    const users = file('# users\nbob=other\ncarol = c\n');
    expect(loadSettings(['--sasl-users-file', users]).settings.saslUsers).toEqual({ bob: 'other', carol: 'c' });
    expect(loadSettings(['--sasl-users-file', users, '--jaas-config', file(JAAS)]).settings.saslUsers).toEqual({
      super: 'adminsecret',
      bob: 'other',
      alice: 'alicesecret',
      carol: 'c',
    });
  });

  test('without either there are no SASL users; with SASLAuthenticationProvider named there is no warning', () => {
    const { settings, warnings } = loadSettings([
      '--config',
      file('clientPort=0\nauthProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\nauthProvider.2=com.example.Mine\n'),
    ]);
    expect(settings.saslUsers).toBeUndefined();
    expect(serverOptions(settings, undefined).sasl).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/:3: authProvider\.2 is not served by tenure-server; ignored/)]);
  });

  test('a file that cannot be read or holds no users is an error naming the key and the file', () => {
    const missing = join(dir, 'missing.jaas');
    const e = configError(() => loadSettings(['--jaas-config', missing]));
    expect(e.key).toBe('java.security.auth.login.config');
    expect(e.message).toMatch(new RegExp(`^java\\.security\\.auth\\.login\\.config: cannot read ${missing}`));
    const kerberos = file('Server { com.sun.security.auth.module.Krb5LoginModule required; };');
    expect(configError(() => loadSettings(['--jaas-config', kerberos])).message).toMatch(/DIGEST-MD5 only/);
    const empty = file('# nobody\n');
    expect(configError(() => loadSettings(['--sasl-users-file', empty]))).toMatchObject({
      key: 'sasl.usersFile',
      message: expect.stringMatching(/has no name=password lines/),
    });
  });
});

describe('WebSocket keys', () => {
  test('webSocketPort, webSocketPortAddress, webSocketPath, webSocketOrigins from the file, and their flags', () => {
    const { settings } = loadSettings([
      '--config',
      file(
        'clientPort=2181\nwebSocketPort=8080\nwebSocketPortAddress=127.0.0.1\nwebSocketPath=/zk\nwebSocketOrigins=https://app.example.com, http://localhost:3000\n',
      ),
    ]);
    expect(settings).toMatchObject({
      webSocketPort: 8080,
      webSocketPortAddress: '127.0.0.1',
      webSocketPath: '/zk',
      webSocketOrigins: ['https://app.example.com', 'http://localhost:3000'],
    });
    expect(
      loadSettings(['--ws-port', '0', '--ws-host', '::1', '--ws-path', '/x', '--ws-origins', 'https://a.example']).settings,
    ).toMatchObject({
      webSocketPort: 0,
      webSocketPortAddress: '::1',
      webSocketPath: '/x',
      webSocketOrigins: ['https://a.example'],
    });
  });

  test('bad values name the key; the client port twice is an error', () => {
    expect(configError(() => loadSettings(['--ws-path', 'zk'])).message).toMatch(
      /--ws-path: bad value for webSocketPath: "zk" does not start with \//,
    );
    expect(configError(() => loadSettings(['--ws-origins', 'example.com'])).message).toMatch(
      /bad value for webSocketOrigins: "example.com" is not an origin/,
    );
    expect(configError(() => loadSettings(['--ws-port', 'x'])).key).toBe('webSocketPort');
    expect(configError(() => loadSettings(['--port', '2181', '--ws-port', '2181'])).message).toMatch(
      /webSocketPort 2181 is the clientPort too/,
    );
  });
});
