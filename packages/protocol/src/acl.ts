/** ACL helpers: ZooKeeper's well-known lists and the digest scheme (wire doc §8). */
import { createHash } from 'node:crypto';
import { Perms } from './constants.js';
import type { ACL, Id } from './records.js';

export const ANYONE_ID_UNSAFE: Id = Object.freeze({ scheme: 'world', id: 'anyone' });
export const AUTH_IDS: Id = Object.freeze({ scheme: 'auth', id: '' });

/** [ALL, world:anyone] */
export const OPEN_ACL_UNSAFE: readonly ACL[] = Object.freeze([{ perms: Perms.ALL, id: ANYONE_ID_UNSAFE }]);
/** [ALL, auth:""] — expanded by the server to the caller's authenticated ids. */
export const CREATOR_ALL_ACL: readonly ACL[] = Object.freeze([{ perms: Perms.ALL, id: AUTH_IDS }]);
/** [READ, world:anyone] */
export const READ_ACL_UNSAFE: readonly ACL[] = Object.freeze([{ perms: Perms.READ, id: ANYONE_ID_UNSAFE }]);

/** The digest id for user:password: `user:base64(sha1("user:password"))`. */
export function digestId(user: string, password: string): Id {
  const hash = createHash('sha1').update(`${user}:${password}`, 'utf8').digest('base64');
  return { scheme: 'digest', id: `${user}:${hash}` };
}

/** The digest identity the server derives from an auth packet's `user:password` bytes. */
export function digestFromAuth(auth: string): string {
  const i = auth.indexOf(':');
  const user = i < 0 ? auth : auth.slice(0, i);
  return `${user}:${createHash('sha1').update(auth, 'utf8').digest('base64')}`;
}
