/** Path rules (docs/zookeeper-wire-protocol.md §6.7) and small helpers that every package needs. */
import { InvalidPathError } from './errors.js';

function badChar(c: number): boolean {
  return c === 0 || (c > 0x00 && c <= 0x1f) || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff0 && c <= 0xffff);
}

/** The reason a path is invalid, or undefined when it is valid. `sequential` allows a trailing '/'. */
export function pathProblem(path: unknown, sequential = false): string | undefined {
  if (typeof path !== 'string') return 'path must be a string';
  if (path.length === 0) return 'path must not be empty';
  if (path[0] !== '/') return 'path must start with /';
  const p = sequential ? path + '1' : path;
  if (p.length === 1) return undefined;
  if (p.endsWith('/')) return 'path must not end with /';
  let segStart = 1;
  for (let i = 1; i <= p.length; i++) {
    if (i === p.length || p[i] === '/') {
      const seg = p.slice(segStart, i);
      if (seg.length === 0) return `empty node name at index ${i}`;
      if (seg === '.' || seg === '..') return `relative segment "${seg}" at index ${segStart}`;
      segStart = i + 1;
      continue;
    }
    const c = p.charCodeAt(i);
    if (badChar(c)) return `invalid character \\u${c.toString(16).padStart(4, '0')} at index ${i}`;
  }
  return undefined;
}

/** Throws `InvalidPathError` naming the path and the reason. */
export function validatePath(path: string, sequential = false): string {
  const problem = pathProblem(path, sequential);
  if (problem !== undefined) throw new InvalidPathError(String(path), problem);
  return path;
}

/** The parent of a path: '/a/b' → '/a', '/a' → '/'. The root has no parent ('' is returned). */
export function parentPath(path: string): string {
  if (path === '/') return '';
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** The last segment of a path: '/a/b' → 'b'. */
export function nodeName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Joins a parent and a child name or relative path. */
export function joinPath(parent: string, child: string): string {
  if (child.startsWith('/')) child = child.slice(1);
  if (parent === '/' || parent === '') return '/' + child;
  return child === '' ? parent : `${parent}/${child}`;
}

/** Every ancestor of a path, nearest last: '/a/b/c' → ['/', '/a', '/a/b']. */
export function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let p = parentPath(path); p !== ''; p = parentPath(p)) out.push(p);
  return out.reverse();
}

/** Prefixes a chroot or namespace ('/app') to a client path. */
export function prependChroot(chroot: string, path: string): string {
  if (!chroot || chroot === '/') return path;
  return path === '/' ? chroot : chroot + path;
}

/** Strips a chroot from a server path; paths outside the chroot are returned unchanged (ZooKeeper 3.9's rule). */
export function stripChroot(chroot: string, path: string): string {
  if (!chroot || chroot === '/') return path;
  if (path === chroot) return '/';
  if (path.startsWith(chroot + '/')) return path.slice(chroot.length);
  return path;
}

/** Formats a sequential suffix as ZooKeeper does (`%010d`). */
export function sequenceSuffix(n: number): string {
  return n < 0 ? '-' + String(-n).padStart(10, '0') : String(n).padStart(10, '0');
}
