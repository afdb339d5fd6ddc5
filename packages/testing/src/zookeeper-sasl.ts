/**
 * SaslZooKeeper: a real standalone ZooKeeper 3.8 (TestingServer) with SASL DIGEST-MD5 through
 * JAAS, as on this machine's Debian package: `authProvider.1=...SASLAuthenticationProvider` in
 * zoo.cfg and `-Djava.security.auth.login.config` naming a `Server { DigestLoginModule user_<name>="<password>"; }`
 * section. SASL is not required (no `enforce.auth`): a client without it connects unauthenticated.
 *
 * For Java clients it writes one JAAS file per user (`Client { DigestLoginModule username= password= }`)
 * and gives the JVM flags to use it (`javaClientFlags`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestingServer, type TestingServerOptions } from './testing-server.js';
import { makeWorkDir, removeWorkDir } from './zookeeper-node.js';
import { InvalidArgumentError } from '@tenure/protocol';

export interface SaslZooKeeperOptions extends TestingServerOptions {
  /** DIGEST-MD5 users and passwords. Default `{ bob: 'bobsecret', alice: 'alicesecret' }`. */
  users?: Readonly<Record<string, string>>;
}

const DIGEST_LOGIN_MODULE = 'org.apache.zookeeper.server.auth.DigestLoginModule';

/** A JAAS string literal: quotes and backslashes escaped. */
const jaasString = (s: string): string => `"${s.replace(/(["\\])/g, '\\$1')}"`;

function checkName(user: string): string {
  // user_<name> is a JAAS option name: keep to what it can hold.
  if (!/^[A-Za-z0-9_.-]+$/.test(user))
    throw new InvalidArgumentError(`SaslZooKeeper: user name ${JSON.stringify(user)} is not a plain JAAS option name`);
  return user;
}

export class SaslZooKeeper implements AsyncDisposable {
  private constructor(
    readonly server: TestingServer,
    readonly users: Readonly<Record<string, string>>,
    private readonly dir: string,
  ) {}

  /** Starts the server with SASL DIGEST-MD5; resolves once it serves. */
  static async start(options: SaslZooKeeperOptions = {}): Promise<SaslZooKeeper> {
    const { users = { bob: 'bobsecret', alice: 'alicesecret' }, ...rest } = options;
    const dir = makeWorkDir('tenure-zk-sasl-');
    try {
      const entries = Object.entries(users).map(([u, p]) => `  user_${checkName(u)}=${jaasString(p)}`);
      const serverJaas = join(dir, 'server.jaas');
      writeFileSync(serverJaas, `Server {\n  ${DIGEST_LOGIN_MODULE} required\n${entries.join('\n')};\n};\n`);
      const server = await TestingServer.start({
        ...rest,
        config: { 'authProvider.1': 'org.apache.zookeeper.server.auth.SASLAuthenticationProvider', ...rest.config },
        systemProperties: { 'java.security.auth.login.config': serverJaas, ...rest.systemProperties },
      });
      return new SaslZooKeeper(server, users, dir);
    } catch (err) {
      removeWorkDir(dir);
      throw err;
    }
  }

  /** '127.0.0.1:<port>'. */
  get connectString(): string {
    return this.server.connectString;
  }

  /** The server's log (SASL refusals are logged there: "Mismatched response"). */
  get logFile(): string {
    return this.server.logFile;
  }

  /**
   * JVM flags for a Java ZooKeeper client that authenticates as `user` (with its password, or
   * `password` to give a wrong one), or that runs no SASL at all (`null`).
   */
  javaClientFlags(user: string | null, password?: string): string[] {
    if (user === null) return ['-Dzookeeper.sasl.client=false'];
    const pass = password ?? this.users[user];
    if (pass === undefined) throw new InvalidArgumentError(`SaslZooKeeper: no password for ${user}`);
    const file = join(this.dir, `client-${checkName(user)}-${Buffer.from(pass).toString('hex').slice(0, 16)}.jaas`);
    writeFileSync(
      file,
      `Client {\n  ${DIGEST_LOGIN_MODULE} required\n  username=${jaasString(user)}\n  password=${jaasString(pass)};\n};\n`,
    );
    return [`-Djava.security.auth.login.config=${file}`];
  }

  /** Stops the server and deletes its files (and the JAAS files). Idempotent, as both steps are. */
  close(): Promise<void> {
    return this.server.close().finally(() => removeWorkDir(this.dir));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
