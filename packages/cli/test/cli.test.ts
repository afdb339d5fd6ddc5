/** Every command of `tenure` against the embedded server over TCP (see cli-suite.ts). */
import { TestingEmbeddedServer } from '@tenure/testing';
import { cliSuite, saslSuite } from './cli-suite.js';

cliSuite('tenure against the embedded server (TCP)', () => TestingEmbeddedServer.start());
saslSuite(
  'tenure --sasl against the embedded server (TCP)',
  () => TestingEmbeddedServer.start({ sasl: { users: { bob: 'secret' } } }),
  'secret',
);
