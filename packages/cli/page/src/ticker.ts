/**
 * Durations that keep counting between updates: an element rendered with `since(ms)` shows `ms`
 * plus the time elapsed since it was rendered, refreshed every second.
 */
import { h } from './dom.js';
import { duration } from './format.js';

const rendered = new WeakMap<Element, { base: number; at: number }>();

/** A span showing `baseMs` and counting on. */
export function since(baseMs: number | null, cls = 'since'): HTMLSpanElement {
  const el = h(`span.${cls}` as 'span', null, duration(baseMs));
  if (baseMs !== null) {
    el.classList.add('ticking');
    rendered.set(el, { base: baseMs, at: performance.now() });
  }
  return el;
}

setInterval(() => {
  for (const el of document.querySelectorAll('.ticking')) {
    const r = rendered.get(el);
    if (r) el.textContent = duration(r.base + performance.now() - r.at);
  }
}, 1_000);
