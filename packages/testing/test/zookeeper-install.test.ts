import { describe, expect, test } from 'vitest';
import { ZooKeeperUnavailableError, locateZooKeeper, realZooKeeper } from '@tenure/testing';

describe('finding Java and ZooKeeper', () => {
  test('without java the error names the apt package', () => {
    const found = locateZooKeeper({ PATH: '/nonexistent' });
    expect(found).toBeInstanceOf(ZooKeeperUnavailableError);
    expect((found as Error).message).toMatch(/apt-get install zookeeper/);
  });

  test('without the jar the error names the apt package', () => {
    const found = locateZooKeeper({ PATH: process.env.PATH }, ['/nonexistent/zookeeper.jar']);
    // On a machine without java this reports java first; either way the package is named.
    expect(found).toBeInstanceOf(ZooKeeperUnavailableError);
    expect((found as Error).message).toMatch(/`zookeeper`/);
  });

  test('locally a missing installation is a skip with a reason; with CI=true it is an error', () => {
    const local = realZooKeeper({ PATH: '/nonexistent' });
    expect(local.available).toBe(false);
    expect(local.reason).toMatch(/apt-get install zookeeper/);
    expect(() => realZooKeeper({ PATH: '/nonexistent', CI: 'true' })).toThrow(ZooKeeperUnavailableError);
  });
});
