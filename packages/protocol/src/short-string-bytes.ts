/**
 * UTF-8 length and write for short strings such as znode paths. Buffer.byteLength and buf.write cross
 * into C++ for every call; for a short ASCII path a plain loop is cheaper. Anything else falls back
 * to Buffer's own UTF-8 encoder, so the bytes are identical either way.
 */
const SHORT = 64;

/** The UTF-8 byte length of `s`. */
export function utf8Length(s: string): number {
  if (s.length <= SHORT) {
    let i = 0;
    while (i < s.length && s.charCodeAt(i) < 0x80) i++;
    if (i === s.length) return i;
  }
  return Buffer.byteLength(s, 'utf8');
}

/** Writes `s` at `at`; `n` is `utf8Length(s)`. */
export function writeUtf8(buf: Buffer, at: number, s: string, n: number): void {
  if (n === s.length && n <= SHORT) {
    for (let i = 0; i < n; i++) buf[at + i] = s.charCodeAt(i);
  } else {
    buf.write(s, at, n, 'utf8');
  }
}
