/**
 * Bundles @tenure/* code for the browser with esbuild, as an application's bundler would: platform
 * 'browser', so each package.json's "browser" export condition is chosen. Packages resolve to
 * their TypeScript source (`./dist/x.js` in "exports" read as `./src/x.ts`), so no build is
 * needed, yet the conditions that are checked are the published ones.
 *
 * Every import of a Node built-in (`node:net`, or a bare `events`) and of `ws` is recorded with
 * the module that made it, instead of failing the build, so a test can name the offender. So is
 * every free use of a Node-only global (`setImmediate`, `process`, ...): `globalThis.process?.x`
 * is how code that runs in both asks for one. (`Buffer` is left to the bundler: see the README.)
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** One import a browser bundle must not contain. */
export interface ForbiddenImport {
  specifier: string;
  /** The importing file, relative to the repository root. */
  importer: string;
}

export interface BrowserBundle {
  code: string;
  forbidden: ForbiddenImport[];
  /** Every source file in the bundle, relative to the repository root. */
  inputs: string[];
  /** Node-only globals used as free identifiers, with a little of the code around each. */
  nodeGlobals: string[];
}

const NODE_GLOBALS = ['process', 'setImmediate', 'clearImmediate', 'global', '__dirname', '__filename'];
const MARK = '__tenure_node_only_global__';

const NODE_ONLY = new Set([...builtinModules, 'ws']);

/** `@tenure/<name>` → its source entry under the "browser" condition (else "default"). */
function tenureSources(): Plugin {
  return {
    name: 'tenure-sources',
    setup(b) {
      b.onResolve({ filter: /^@tenure\/[^/]+$/ }, (args) => {
        const dir = join(repoRoot, 'packages', args.path.slice('@tenure/'.length));
        const dot = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).exports['.'];
        const browser = typeof dot.browser === 'string' ? dot.browser : dot.browser?.default;
        const target: string = browser ?? dot.default;
        return { path: join(dir, target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')) };
      });
    },
  };
}

function recordNodeOnly(forbidden: ForbiddenImport[]): Plugin {
  return {
    name: 'record-node-only',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        const bare = args.path.replace(/^node:/, '');
        if (!args.path.startsWith('node:') && !NODE_ONLY.has(bare)) return undefined;
        forbidden.push({ specifier: args.path, importer: args.importer.replace(repoRoot, '') });
        return { path: args.path, external: true };
      });
    },
  };
}

/** Bundles `source` (an ES module's text, resolved from the repository root) for the browser. */
export async function bundleForBrowser(source: string, options: Pick<BuildOptions, 'inject' | 'minify'> = {}): Promise<BrowserBundle> {
  const forbidden: ForbiddenImport[] = [];
  const result = await build({
    stdin: { contents: source, resolveDir: repoRoot, sourcefile: 'entry.ts', loader: 'ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [recordNodeOnly(forbidden), tenureSources()],
    // define replaces free identifiers only: a property such as `globalThis.process` stays as it is.
    define: Object.fromEntries(NODE_GLOBALS.map((g) => [g, `${MARK}${g}`])),
    ...options,
  });
  const code = result.outputFiles[0]!.text;
  const nodeGlobals = [...code.matchAll(new RegExp(`${MARK}(\\w+)`, 'g'))].map(
    (m) => `${m[1]}: ${code.slice(Math.max(0, m.index - 60), m.index + 60).replace(/\s+/g, ' ')}`,
  );
  return { code, forbidden, inputs: Object.keys(result.metafile.inputs), nodeGlobals };
}

/** The client README's browser snippet (the ```ts block after `<!-- browser-snippet -->`), as it stands. */
export function readmeSnippet(): string {
  const text = readFileSync(join(repoRoot, 'packages/client/README.md'), 'utf8');
  const at = text.indexOf('<!-- browser-snippet -->');
  const block = at < 0 ? null : /```ts\n([\s\S]*?)```/.exec(text.slice(at));
  if (!block) throw new Error('packages/client/README.md: no ```ts block after <!-- browser-snippet -->');
  return block[1]!;
}
