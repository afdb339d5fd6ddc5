import { readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Tests import every @tenure/* package from its TypeScript source, so no build is needed to test.
export const root = fileURLToPath(new URL('.', import.meta.url));
export const packages = readdirSync(`${root}packages`).filter((p) => existsSync(`${root}packages/${p}/src/index.ts`));
export const aliases = packages.map((p) => ({ find: new RegExp(`^@tenure/${p}$`), replacement: `${root}packages/${p}/src/index.ts` }));

/** Long fault, browser and JVM suites: `npm run test:slow` runs them, `npm test` leaves them out. */
export const SLOW = '**/*.slow.test.ts';
