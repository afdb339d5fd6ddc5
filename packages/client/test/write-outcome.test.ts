/** The lost-reply table against the embedded server over TCP (see write-outcome-cases.ts). */
import { TestingEmbeddedServer } from '@tenure/testing';
import { describeWriteOutcomes } from './write-outcome-cases.js';

let server: TestingEmbeddedServer | undefined;
describeWriteOutcomes('embedded server', {
  start: async () => (server = await TestingEmbeddedServer.start()).connectString,
  close: async () => server?.close(),
});
