/**
 * Path validation on the hot path: one pass over the characters with no allocation. Only an
 * invalid path goes through @tenure/protocol's validatePath, which names the problem.
 */
import { validatePath } from '@tenure/protocol';

/** Returns `path` if valid (ZooKeeper's rules, docs/zookeeper-wire-protocol.md §6.7); throws InvalidPathError otherwise. */
export function checkPath(path: string, sequential = false): string {
  if (isValid(path, sequential)) return path;
  return validatePath(path, sequential);
}

function isValid(path: string, sequential: boolean): boolean {
  if (typeof path !== 'string') return false;
  const n = path.length;
  if (n === 0 || path.charCodeAt(0) !== 47) return false;
  if (n === 1) return true;
  if (path.charCodeAt(n - 1) === 47 && !sequential) return false;
  let segStart = 1;
  for (let i = 1; i < n; i++) {
    const c = path.charCodeAt(i);
    if (c === 47) {
      const len = i - segStart;
      if (len === 0) return false;
      if (len <= 2 && path.charCodeAt(segStart) === 46 && (len === 1 || path.charCodeAt(segStart + 1) === 46)) return false;
      segStart = i + 1;
      continue;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0) return false;
  }
  // The last segment (for a sequential path ending in '/', the server appends the number).
  const len = n - segStart;
  if (len === 0) return sequential;
  if (len <= 2 && path.charCodeAt(segStart) === 46 && (len === 1 || path.charCodeAt(segStart + 1) === 46)) return sequential;
  return true;
}
