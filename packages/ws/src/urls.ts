/**
 * The URLs a WebSocket transport reaches: `ws://host:port/path` or `wss://…`, one per server (or
 * gateway). They are the transport's `hosts`; the client chooses among them as it does among the
 * servers of a connect string.
 */
import { InvalidArgumentError } from '@tenure/protocol';

/** Checks and normalises `urls` (one URL or a list); throws TypeError for an empty list or a non-WebSocket URL. */
export function parseWebSocketUrls(urls: string | readonly string[]): string[] {
  const list = typeof urls === 'string' ? [urls] : [...urls];
  const out: string[] = [];
  for (const raw of list) {
    if (typeof raw !== 'string') throw new InvalidArgumentError(`WebSocket URL must be a string, got ${typeof raw}`);
    const text = raw.trim();
    if (text === '') continue;
    out.push(normaliseUrl(text));
  }
  if (out.length === 0) throw new InvalidArgumentError(`no WebSocket URLs in ${JSON.stringify(urls)}`);
  return [...new Set(out)];
}

/** One URL in its canonical form (`new URL(...).href`); only `ws:` and `wss:` are accepted. */
export function normaliseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError(`invalid WebSocket URL ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new InvalidArgumentError(`WebSocket URL ${JSON.stringify(text)} must start with ws:// or wss://`);
  }
  if (url.hash !== '') throw new InvalidArgumentError(`WebSocket URL ${JSON.stringify(text)} must not have a #fragment`);
  return url.href;
}
