/**
 * The page's files, served from the package itself (no CDN: the page works offline).
 * - `page/index.html` and `page/style.css`: committed as they are.
 * - `dist-page/page/src/**.js`: the page's TypeScript, compiled by `tsc -b` (the package's
 *   tsconfig references `page/tsconfig.json`, so the root `prepare` builds it at `npm ci`).
 * The same relative paths hold from `src/ui/` and from the compiled `dist/ui/`.
 */
import { readFile } from 'node:fs/promises';
import { extname, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
const pageDir = `${packageRoot}page${sep}`;
const scriptDir = `${packageRoot}dist-page${sep}page${sep}src${sep}`;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface PageFile {
  body: Buffer;
  type: string;
}

/** Values written into index.html's `{{name}}` placeholders (HTML-escaped). */
export type PageValues = Record<string, string>;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Thrown when the compiled scripts are missing (the package was not built). */
export const NOT_BUILT = 'the page is not built: run `npm run build` (tsc -b) in the repository';

export async function indexPage(values: PageValues): Promise<PageFile> {
  const html = await readFile(`${pageDir}index.html`, 'utf8');
  const filled = html.replace(/\{\{(\w+)\}\}/g, (_, name: string) => escapeHtml(values[name] ?? ''));
  return { body: Buffer.from(filled), type: TYPES['.html']! };
}

/**
 * A file under `/app/` (scripts) or `/static/` (style); null for anything else, `..` included.
 */
export async function pageFile(urlPath: string): Promise<PageFile | null> {
  let base: string;
  let rest: string;
  if (urlPath.startsWith('/app/')) {
    base = scriptDir;
    rest = urlPath.slice('/app/'.length);
  } else if (urlPath.startsWith('/static/')) {
    base = pageDir;
    rest = urlPath.slice('/static/'.length);
    if (!rest.endsWith('.css') && !rest.endsWith('.svg')) return null;
  } else {
    return null;
  }
  const type = TYPES[extname(rest)];
  if (type === undefined) return null;
  const file = normalize(base + decodeURIComponent(rest));
  if (!file.startsWith(base)) return null;
  try {
    return { body: await readFile(file), type };
  } catch {
    return null;
  }
}
