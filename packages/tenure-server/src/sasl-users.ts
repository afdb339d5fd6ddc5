/**
 * tenure-server's SASL user table, from the files operators already have:
 *
 * - a JAAS login config, as ZooKeeper takes it (`-Djava.security.auth.login.config=…`): the
 *   `Server` section's DigestLoginModule entry, whose `user_<name>="<password>"` options are the
 *   DIGEST-MD5 users (ZooKeeper's DigestLoginModule / SaslServerCallbackHandler read the same);
 * - or a plain users file, one `name=password` line each (Java properties syntax).
 *
 * Both are read at start-up; a file that cannot be read or gives no users is a ConfigError naming
 * the key and the file, so the process exits 2 instead of serving without the users it was given.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from './config.js';
import { parseProperties } from './properties.js';

/** The JAAS section ZooKeeper's server reads (its `zookeeper.sasl.serverconfig` default). */
export const JAAS_SERVER_SECTION = 'Server';

/** One login module entry of a JAAS section: `Class Flag key="value" … ;`. */
export interface JaasEntry {
  loginModule: string;
  flag: string;
  options: Record<string, string>;
}

type Token = { kind: 'word' | 'string' | 'punct'; text: string };

function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (text.startsWith('//', i) || c === '#') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) throw new ConfigError('an unterminated /* comment');
      i = end + 2;
    } else if (c === '"') {
      let s = '';
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        s += text[i++];
      }
      if (i >= text.length) throw new ConfigError('an unterminated quoted value');
      i++;
      out.push({ kind: 'string', text: s });
    } else if ('{};='.includes(c)) {
      out.push({ kind: 'punct', text: c });
      i++;
    } else {
      const m = /^[^\s{};="]+/.exec(text.slice(i))!;
      out.push({ kind: 'word', text: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

/** Parses a JAAS login configuration into its sections (Java's ConfigFile syntax). */
export function parseJaas(text: string): Map<string, JaasEntry[]> {
  const t = tokens(text);
  let i = 0;
  const next = (what: string): Token => {
    const tok = t[i++];
    if (tok === undefined) throw new ConfigError(`the file ends where ${what} was expected`);
    return tok;
  };
  const expectPunct = (p: string): void => {
    const tok = next(`"${p}"`);
    if (tok.kind !== 'punct' || tok.text !== p) throw new ConfigError(`expected "${p}", found ${JSON.stringify(tok.text)}`);
  };
  const sections = new Map<string, JaasEntry[]>();
  while (i < t.length) {
    const name = next('a section name');
    if (name.kind !== 'word') throw new ConfigError(`expected a section name, found ${JSON.stringify(name.text)}`);
    expectPunct('{');
    const entries: JaasEntry[] = [];
    while (!(t[i]?.kind === 'punct' && t[i]!.text === '}')) {
      const loginModule = next('a login module class');
      if (loginModule.kind !== 'word')
        throw new ConfigError(`expected a login module class in ${name.text}, found ${JSON.stringify(loginModule.text)}`);
      const flag = next('a control flag');
      if (flag.kind !== 'word') throw new ConfigError(`expected a control flag after ${loginModule.text}`);
      const options: Record<string, string> = {};
      while (!(t[i]?.kind === 'punct' && t[i]!.text === ';')) {
        const key = next('an option or ";"');
        if (key.kind !== 'word') throw new ConfigError(`expected an option name in ${name.text}, found ${JSON.stringify(key.text)}`);
        expectPunct('=');
        const value = next(`the value of ${key.text}`);
        if (value.kind === 'punct') throw new ConfigError(`expected the value of ${key.text}, found ${JSON.stringify(value.text)}`);
        options[key.text] = value.text;
      }
      i++; // ;
      entries.push({ loginModule: loginModule.text, flag: flag.text, options });
    }
    i++; // }
    if (t[i]?.kind === 'punct' && t[i]!.text === ';') i++;
    sections.set(name.text, entries);
  }
  return sections;
}

/** The DIGEST-MD5 users of a JAAS file's Server section (`user_bob="secret"` → bob: secret). */
export function jaasServerUsers(text: string, section = JAAS_SERVER_SECTION): Record<string, string> {
  const entries = parseJaas(text).get(section);
  if (entries === undefined) throw new ConfigError(`it has no ${section} section (the section ZooKeeper's server reads)`);
  const digest = entries.filter((e) => e.loginModule.endsWith('DigestLoginModule'));
  if (digest.length === 0) {
    const others = entries.map((e) => e.loginModule).join(', ');
    throw new ConfigError(
      `its ${section} section has no DigestLoginModule entry (${others || 'no entries'}); tenure-server serves DIGEST-MD5 only`,
    );
  }
  const users: Record<string, string> = {};
  for (const e of digest) for (const [k, v] of Object.entries(e.options)) if (k.startsWith('user_') && k.length > 5) users[k.slice(5)] = v;
  if (Object.keys(users).length === 0)
    throw new ConfigError(`its ${section} section's DigestLoginModule has no user_<name>="<password>" options`);
  return users;
}

/** A users file: `name=password` lines. */
export function usersFileUsers(text: string): Record<string, string> {
  const users: Record<string, string> = {};
  for (const e of parseProperties(text)) users[e.key] = e.value;
  if (Object.keys(users).length === 0) throw new ConfigError('it has no name=password lines');
  return users;
}

/**
 * The users of the configured files (both may be given: the users file wins for a name in both),
 * or undefined when neither is. Throws ConfigError naming the key and the file.
 */
export function readSaslUsers(files: {
  jaasConfig: string | undefined;
  usersFile: string | undefined;
}): Record<string, string> | undefined {
  const read = (key: string, path: string, parse: (text: string) => Record<string, string>): Record<string, string> => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`${key}: cannot read ${path}: ${(err as Error).message}`, key);
    }
    try {
      return parse(text);
    } catch (err) {
      throw new ConfigError(`${key}: ${path}: ${(err as Error).message}`, key);
    }
  };
  if (files.jaasConfig === undefined && files.usersFile === undefined) return undefined;
  return {
    ...(files.jaasConfig === undefined ? {} : read('java.security.auth.login.config', files.jaasConfig, (t) => jaasServerUsers(t))),
    ...(files.usersFile === undefined ? {} : read('sasl.usersFile', files.usersFile, usersFileUsers)),
  };
}
