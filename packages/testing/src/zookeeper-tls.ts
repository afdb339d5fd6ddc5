/**
 * A real ZooKeeper 3.8 (Debian's) with TLS: a TestingServer on the Netty connection factory with a
 * plaintext clientPort and a TLS secureClientPort, using the certificates of tls-certificates.ts.
 *
 * What Debian's packaging needs (docs/zookeeper-tls-sasl.md): netty-codec and netty-resolver
 * on the class path (zookeeper.jar's manifest leaves them out, and without netty-codec every
 * connection fails). With secureClientPort set, ZooKeeper registers the `x509` auth provider
 * itself: a client certificate authenticates as `x509:<subject>` (CLIENT_X509_ID). ZooKeeper
 * negotiates TLS 1.2 only, by default.
 *
 * `javaClientFlags()` gives a Java ZooKeeper client (zkCli, Curator) the same TLS setup.
 */
import { join } from 'node:path';
import type { Transport } from '@tenure/protocol';
import { zookeeper, type TlsSetting } from '@tenure/zookeeper';
import { freePort } from './free-port.js';
import { TestingServer, type TestingServerOptions } from './testing-server.js';
import { STORE_PASSWORD, makeTlsCertificates, type TlsCertificates } from './tls-certificates.js';
import { makeWorkDir, removeWorkDir } from './zookeeper-node.js';

/** Netty jars the Netty factory and the Netty client need beyond zookeeper.jar's manifest. */
export const NETTY_JARS = ['/usr/share/java/netty-codec.jar', '/usr/share/java/netty-resolver.jar'];

export interface TlsTestingServerOptions extends TestingServerOptions {
  /** ZooKeeper's ssl.clientAuth: `need` (the default: a client certificate is required), `want` or `none`. */
  clientAuth?: 'need' | 'want' | 'none';
  /** Certificates to use; default a fresh set made in a temporary folder. */
  certificates?: TlsCertificates;
}

/**
 * Flags for a Java ZooKeeper client (ClientCnxnSocketNetty) over TLS with the client certificate
 * (`withCertificate: false`: the truststore only). Put NETTY_JARS on its class path too.
 */
export function javaClientFlags(certs: TlsCertificates, withCertificate = true): string[] {
  const p = (k: string, v: string) => `-Dzookeeper.${k}=${v}`;
  return [
    p('clientCnxnSocket', 'org.apache.zookeeper.ClientCnxnSocketNetty'),
    p('client.secure', 'true'),
    ...(withCertificate
      ? [p('ssl.keyStore.location', certs.stores.client), p('ssl.keyStore.password', STORE_PASSWORD), p('ssl.keyStore.type', 'PKCS12')]
      : []),
    p('ssl.trustStore.location', certs.stores.truststore),
    p('ssl.trustStore.password', STORE_PASSWORD),
    p('ssl.trustStore.type', 'PKCS12'),
  ];
}

export class TlsTestingServer {
  private constructor(
    /** The server; its `connectString` and `transport()` are the plaintext port. */
    readonly server: TestingServer,
    readonly securePort: number,
    readonly certificates: TlsCertificates,
    private readonly ownCertsDir: string | undefined,
  ) {}

  /** Starts ZooKeeper with a plaintext and a TLS port; resolves once it serves. */
  static async start(options: TlsTestingServerOptions = {}): Promise<TlsTestingServer> {
    const ownDir = options.certificates === undefined ? makeWorkDir('tenure-tls-') : undefined;
    try {
      const certs = options.certificates ?? (await makeTlsCertificates(ownDir!));
      const securePort = await freePort();
      const server = await TestingServer.start({
        ...options,
        classpath: [...NETTY_JARS, ...(options.classpath ?? [])],
        config: {
          serverCnxnFactory: 'org.apache.zookeeper.server.NettyServerCnxnFactory',
          secureClientPort: securePort,
          secureClientPortAddress: '127.0.0.1',
          'ssl.keyStore.location': certs.stores.server,
          'ssl.keyStore.password': STORE_PASSWORD,
          'ssl.keyStore.type': 'PKCS12',
          'ssl.trustStore.location': certs.stores.truststore,
          'ssl.trustStore.password': STORE_PASSWORD,
          'ssl.trustStore.type': 'PKCS12',
          'ssl.clientAuth': options.clientAuth ?? 'need',
          ...options.config,
        },
      });
      return new TlsTestingServer(server, securePort, certs, ownDir);
    } catch (err) {
      if (ownDir !== undefined) removeWorkDir(ownDir);
      throw err;
    }
  }

  /** '127.0.0.1:<securePort>'. */
  get secureConnectString(): string {
    return `127.0.0.1:${this.securePort}`;
  }

  /** A transport to the TLS port; default TLS options: trust the CA, present the client certificate. */
  secureTransport(tls: TlsSetting = this.certificates.clientOptions()): Transport {
    return zookeeper(this.secureConnectString, { tls });
  }

  get logFile(): string {
    return join(this.server.directory, 'zookeeper.log');
  }

  /** Stops the server and deletes its data (and certificates it made). Idempotent. */
  async close(): Promise<void> {
    await this.server.close();
    if (this.ownCertsDir !== undefined) removeWorkDir(this.ownCertsDir);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
