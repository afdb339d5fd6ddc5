/**
 * The client README's "SASL" section: its snippet (examples/sasl.ts) runs as the README says, and
 * the README shows exactly that file.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { saslExample } from '../../examples/sasl.js';

it('runs: bob is sasl:bob and reads his node, alice is refused, a wrong password fails at once', async () => {
  expect(await saslExample()).toEqual(['ip:127.0.0.1 sasl:bob', 'for bob', 'alice: NoAuth', 'wrong password: AuthFailed']);
});

it('is the code the client README shows', () => {
  const readme = readFileSync(new URL('../../packages/client/README.md', import.meta.url), 'utf8');
  const source = readFileSync(new URL('../../examples/sasl.ts', import.meta.url), 'utf8');
  expect(readme).toContain('## SASL');
  expect(readme).toContain(source.slice(source.indexOf('import ')).trim());
});
