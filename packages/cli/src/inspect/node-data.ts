/** How node bytes, session ids and zxids are shown: one rule for the CLI and the page. */
import type { DataView } from './report.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** C0 controls other than tab, LF and CR, and DEL: bytes that are valid UTF-8 but no one's text (a 4-byte count, a frame). */
// The control characters are the point: this finds them.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * `data` as UTF-8 text when it decodes as UTF-8 and holds no control characters other than tab,
 * LF and CR; otherwise as base64, marked `encoding: 'base64'`. Empty data is the empty text.
 */
export function decodeData(data: Uint8Array): DataView {
  if (data.length > 0) {
    let text: string | null;
    try {
      text = utf8.decode(data);
    } catch {
      text = null;
    }
    if (text === null || CONTROL.test(text))
      return {
        encoding: 'base64',
        value: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'),
        bytes: data.length,
      };
    return { encoding: 'utf8', value: text, bytes: data.length };
  }
  return { encoding: 'utf8', value: '', bytes: 0 };
}

/** A session id as ZooKeeper prints it: lowercase hex of the unsigned 64-bit value, `0x` first. */
export function sessionHex(id: bigint): string {
  return `0x${BigInt.asUintN(64, id).toString(16)}`;
}

/** How a DataView reads in one line of a table: the text, or `base64:<…>`; cut to `max` characters. */
export function dataText(view: DataView, max = 60): string {
  const s = view.encoding === 'utf8' ? view.value.replace(/[\t\n\r]/g, ' ') : `base64:${view.value}`;
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
