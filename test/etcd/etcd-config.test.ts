/**
 * tenure-server's etcd keys: etcd.tls.* (PEM files; cert and key together), the compactor's
 * retention and period, and a warning for etcd.* keys given without etcd.endpoints.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, settingsFrom } from '@tenure/tenure-server';

const flags = (...pairs: Array<[string, string]>): Array<{ key: string; value: string; flag: string }> =>
  pairs.map(([key, value]) => ({ key, value, flag: key }));

describe("tenure-server's etcd keys", () => {
  it('reads the TLS files and the compactor', () => {
    const { settings, warnings } = settingsFrom(
      {
        path: 'zoo.cfg',
        entries: [
          { key: 'etcd.endpoints', value: 'https://e1:2379,https://e2:2379', line: 1 },
          { key: 'etcd.tls.ca', value: '/etc/etcd/ca.pem', line: 2 },
          { key: 'etcd.tls.cert', value: '/etc/etcd/client.pem', line: 3 },
          { key: 'etcd.tls.key', value: '/etc/etcd/client-key.pem', line: 4 },
          { key: 'etcd.compaction.retention', value: '100000', line: 5 },
          { key: 'etcd.compaction.intervalMs', value: '30000', line: 6 },
        ],
      },
      [],
    );
    expect(warnings).toEqual([]);
    expect(settings.etcdTls).toEqual({ ca: '/etc/etcd/ca.pem', cert: '/etc/etcd/client.pem', key: '/etc/etcd/client-key.pem' });
    expect(settings.etcdCompactionRetention).toBe(100_000);
    expect(settings.etcdCompactionIntervalMs).toBe(30_000);
  });

  it('refuses a certificate without its key and a retention below 1; warns of etcd keys without endpoints', () => {
    const noKey = (): unknown => settingsFrom(undefined, flags(['etcd.endpoints', 'http://e:2379'], ['etcd.tls.cert', '/c.pem']));
    expect(noKey).toThrow(ConfigError);
    expect(noKey).toThrow(/etcd.tls.cert and etcd.tls.key go together/);
    expect(() => settingsFrom(undefined, flags(['etcd.compaction.retention', '0']))).toThrow(/etcd.compaction.retention/);
    expect(settingsFrom(undefined, flags(['etcd.tls.ca', '/ca.pem'])).warnings).toContain(
      'etcd.* keys are set without etcd.endpoints: they are not used',
    );
  });
});
