import { expect, test } from 'vitest';
import { nameText } from '../src/storage/name-text.js';

test('nameText gives what the UTF-8 decoder gives: ASCII of every length, non-ASCII, and bytes that are not UTF-8', () => {
  const names = ['', 'a', 'n0000123', 'lock-0000000012', 'sixteen-bytes-16', 'seventeen-bytes17', 'member-0000000001-longer'];
  for (let n = 1; n <= 20; n++) names.push('x'.repeat(n - 1) + String.fromCharCode(0x20 + n));
  names.push('é', 'nœud-1', '节点', 'a😀b', 'ÿ'.repeat(8));
  for (const name of names) {
    const bytes = Buffer.concat([Buffer.from('/parent/'), Buffer.from(name), Buffer.from('tail')]);
    expect(nameText(bytes, 8, 8 + Buffer.byteLength(name))).toBe(name);
  }
  // Not UTF-8 (a lone continuation byte, a truncated sequence): the decoder's replacement characters.
  for (const raw of [[0x61, 0x80, 0x62], [0xe2, 0x82], [0xff]]) {
    const b = Buffer.from(raw);
    expect(nameText(b, 0, b.length)).toBe(b.toString('utf8'));
  }
});
