/** ACL helpers: ZooKeeper's well-known lists and the digest scheme (docs/zookeeper-wire-protocol.md §8). */
// @noble/hashes rather than node:crypto, so a browser bundle can carry this module.
import { sha1 } from '@noble/hashes/legacy.js';
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
  return { scheme: 'digest', id: `${user}:${sha1Base64(`${user}:${password}`)}` };
}

/** The digest identity the server derives from an auth packet's `user:password` bytes. */
export function digestFromAuth(auth: string): string {
  const i = auth.indexOf(':');
  const user = i < 0 ? auth : auth.slice(0, i);
  return `${user}:${sha1Base64(auth)}`;
}

const sha1Base64 = (text: string): string => Buffer.from(sha1(new TextEncoder().encode(text))).toString('base64');
