/**
 * A namespace is a path prefix the client adds to every path it sends and strips from every path
 * it returns (results and watch events). It sits above the transport's chroot.
 */
import { InvalidPathError, validatePath } from '@tenure/protocol';

export class Namespace {
  /** '' for none, otherwise '/app' (no trailing slash). */
  readonly prefix: string;

  constructor(name: string | null | undefined) {
    if (name === null || name === undefined || name === '' || name === '/') {
      this.prefix = '';
      return;
    }
    if (typeof name !== 'string') throw new InvalidPathError(String(name), 'namespace must be a string');
    const prefix = name.startsWith('/') ? name : '/' + name;
    validatePath(prefix);
    this.prefix = prefix;
  }

  /** The name without the leading slash ('app'), or '' for none; what Curator calls the namespace. */
  get name(): string {
    return this.prefix.slice(1);
  }

  /** Client path → server path. '/' becomes the namespace node itself. */
  toServer(path: string): string {
    const p = this.prefix;
    if (p === '') return path;
    return path === '/' ? p : p + path;
  }

  /** Server path → client path. Paths outside the namespace come back unchanged (ZooKeeper 3.9's chroot rule). */
  fromServer(path: string): string {
    const p = this.prefix;
    if (p === '') return path;
    if (path === p) return '/';
    if (path.length > p.length && path.charCodeAt(p.length) === 47 /* '/' */ && path.startsWith(p)) {
      return path.slice(p.length);
    }
    return path;
  }

  /** Whether a server path lies in this namespace. */
  contains(path: string): boolean {
    const p = this.prefix;
    return p === '' || path === p || (path.startsWith(p) && path.charCodeAt(p.length) === 47);
  }
}

export const NO_NAMESPACE = new Namespace(null);
