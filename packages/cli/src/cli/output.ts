/**
 * Where a command prints: tables and lines for people, or exactly one JSON document with `--json`
 * (bigints as decimal strings). Warnings and notes go to stderr, so stdout stays parseable.
 */
import type { Writable } from 'node:stream';

export interface Output {
  readonly json: boolean;
  /** One line for people (ignored with --json). */
  line(text: string): void;
  /** A table for people: columns padded, the header in capitals. */
  table(header: readonly string[], rows: readonly (readonly string[])[]): void;
  /** The JSON document of this command (with --json). Call once. */
  document(value: unknown): void;
  /** A note for people on stderr (also with --json). */
  warn(text: string): void;
  /** Raw text on stdout (watch's streaming JSON, get's data). */
  raw(text: string): void;
}

export function jsonText(value: unknown, indent = 2): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), indent);
}

/** Lays out rows under a header, two spaces between columns; the last column is not padded. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return (
    all
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export function createOutput(stdout: Writable, stderr: Writable, json: boolean): Output {
  return {
    json,
    line(text) {
      if (!json) stdout.write(`${text}\n`);
    },
    table(header, rows) {
      if (!json) stdout.write(formatTable(header, rows));
    },
    document(value) {
      stdout.write(`${jsonText(value)}\n`);
    },
    warn(text) {
      stderr.write(`${text}\n`);
    },
    raw(text) {
      stdout.write(text);
    },
  };
}

/** A duration for people: `850 ms`, `12.3 s`, `4 min 05 s`, `3 h 02 min`, `2 d 04 h`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${String(m % 60).padStart(2, '0')} min`;
  return `${Math.floor(h / 24)} d ${String(h % 24).padStart(2, '0')} h`;
}

/** A size for people: `0 B`, `512 B`, `1.5 KiB`, `2.0 MiB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
