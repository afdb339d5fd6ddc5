/** The lost-reply table against a real ZooKeeper 3.8 (see write-outcome-cases.ts). */
import { TestingServer, realZooKeeper } from '@tenure/testing';
import { describeWriteOutcomes } from './write-outcome-cases.js';

const zk = realZooKeeper();
let server: TestingServer | undefined;
describeWriteOutcomes(
  'ZooKeeper 3.8',
  {
    start: async () => (server = await TestingServer.start()).connectString,
    close: async () => server?.close(),
  },
  zk.available,
);
