/**
 * Every error a package throws is a TenureError: no source file under packages/<pkg>/src builds a
 * plain Error, TypeError, RangeError or SyntaxError (comments aside).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const packages = fileURLToPath(new URL('../../packages/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

test('no package source constructs a plain Error, TypeError, RangeError or SyntaxError', () => {
  const found: string[] = [];
  for (const pkg of readdirSync(packages)) {
    let files: string[];
    try {
      files = sources(join(packages, pkg, 'src'));
    } catch {
      continue; // a folder without src/
    }
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, '').trimStart();
          if (code.startsWith('*') || code.startsWith('/*')) return;
          if (/\bnew (Error|TypeError|RangeError|SyntaxError)\(/.test(code))
            found.push(`${file.slice(packages.length)}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  expect(found).toEqual([]);
});
