/** @tenure/models bundles for the browser with no Node built-in, as the other recipes (test/browser/browser-entries.test.ts). */
import { expect, test } from 'vitest';
import { bundleForBrowser } from '../../../test/browser/bundle.js';

test('@tenure/models bundles for platform browser without node: imports or Node-only globals', async () => {
  const bundle = await bundleForBrowser(`export * from '@tenure/models';`);
  expect(bundle.forbidden).toEqual([]);
  expect(bundle.nodeGlobals).toEqual([]);
  expect(bundle.inputs.filter((f) => f.includes('packages/zookeeper/') || f.includes('packages/server/'))).toEqual([]);
  expect(bundle.inputs.some((f) => f.includes('packages/models/src/model.ts'))).toBe(true);
});
