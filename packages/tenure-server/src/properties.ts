/**
 * Java `.properties` text, as ZooKeeper reads zoo.cfg (java.util.Properties.load): `key=value`,
 * `key: value` or `key value`; `#` and `!` comments; a trailing backslash continues the line;
 * `\t`, `\n`, `\uXXXX` and escaped separators. Each entry keeps its line for error messages.
 */

/** One `key=value` line of a properties file. */
export interface PropertyEntry {
  key: string;
  value: string;
  /** 1-based line where the entry starts. */
  line: number;
}

const ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f' };

function unescape(s: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) =>
    e.length === 5 ? String.fromCharCode(parseInt(e.slice(1), 16)) : (ESCAPES[e] ?? e),
  );
}

/** Splits a logical line at its first unescaped `=`, `:` or whitespace. */
function splitEntry(text: string): { key: string; value: string } {
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '=' || c === ':' || c === ' ' || c === '\t' || c === '\f') break;
    i++;
  }
  const key = text.slice(0, i);
  let rest = text.slice(i).replace(/^[ \t\f]*/, '');
  if (rest.startsWith('=') || rest.startsWith(':')) rest = rest.slice(1).replace(/^[ \t\f]*/, '');
  return { key: unescape(key), value: unescape(rest) };
}

/** The entries of a properties text, in order (a later duplicate wins when they are applied). */
export function parseProperties(text: string): PropertyEntry[] {
  const lines = text.split(/\r\n|\r|\n/);
  const out: PropertyEntry[] = [];
  for (let n = 0; n < lines.length; n++) {
    const start = n + 1;
    let logical = lines[n]!.replace(/^[ \t\f]+/, '');
    if (logical === '' || logical.startsWith('#') || logical.startsWith('!')) continue;
    // An odd number of trailing backslashes continues the line.
    while (/(^|[^\\])(\\\\)*\\$/.test(logical) && n + 1 < lines.length) {
      logical = logical.slice(0, -1) + lines[++n]!.replace(/^[ \t\f]+/, '');
    }
    const { key, value } = splitEntry(logical);
    // ZooKeeper trims values (QuorumPeerConfig.parseProperties).
    out.push({ key, value: value.trim(), line: start });
  }
  return out;
}
