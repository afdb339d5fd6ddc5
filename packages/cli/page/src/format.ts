/** How values read on the page. */
import type { DataView } from './api.js';

/** 850 ms, 4.2 s, 3 min 12 s, 2 h 5 min. */
export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1_000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.floor(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function clock(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour12: false });
}

/** A node's data as people read it: the text, `base64:…` when binary, or the node's name when empty. */
export function dataLabel(data: DataView, nodeName: string, max = 80): string {
  if (data.bytes === 0) return nodeName;
  const s = data.encoding === 'utf8' ? data.value : `base64:${data.value}`;
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The short form of a protected name: `_c_3f2a…-lock-0000000042` → `lock-0000000042`. */
export function shortName(name: string): string {
  const m = /^_c_[0-9a-f-]{36}-(.*)$/.exec(name);
  return m ? m[1]! : name;
}
