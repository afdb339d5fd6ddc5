/** Every command of `tenure` against the embedded server over TCP (see cli-suite.ts). */
import { TestingEmbeddedServer } from '@tenure/testing';
import { cliSuite } from './cli-suite.js';

cliSuite('tenure against the embedded server (TCP)', () => TestingEmbeddedServer.start());
