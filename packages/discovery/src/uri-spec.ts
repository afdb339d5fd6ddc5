/**
 * Curator's UriSpec: a template such as `{scheme}://{address}:{port}` split into literal and
 * variable parts (stored in the JSON as `{"parts":[{"value","variable"}]}`), and `buildUri`, which
 * fills the variables from an instance the way `UriSpec.build` does.
 */
import { InvalidArgumentError } from '@tenure/client';
import type { ServiceInstance } from './service-instance.js';

/** One part of a template, as in Curator's JSON. */
export interface UriSpecPart {
  value: string;
  variable: boolean;
}

/**
 * Splits a template into parts as Curator's `new UriSpec(String)` does: text outside braces is a
 * literal, text inside is a variable with its whitespace trimmed. A `{` inside a variable, a `}`
 * without its `{`, or an unclosed `{` throws an InvalidArgumentError.
 */
export function parseUriSpec(template: string): UriSpecPart[] {
  const parts: UriSpecPart[] = [];
  let inside = false;
  for (const token of template.split(/([{}])/)) {
    if (token === '{') {
      if (inside)
        throw new InvalidArgumentError(`uriSpec ${JSON.stringify(template)}: { is not allowed inside of a variable specification`);
      inside = true;
    } else if (token === '}') {
      if (!inside) throw new InvalidArgumentError(`uriSpec ${JSON.stringify(template)}: } must be preceded by {`);
      inside = false;
    } else if (token !== '') {
      // Java's StringTokenizer yields no empty tokens; so nothing is added for "{a}{b}"'s gap.
      parts.push({ value: inside ? token.trim() : token, variable: inside });
    }
  }
  if (inside) throw new InvalidArgumentError(`uriSpec ${JSON.stringify(template)}: final variable not closed - expected }`);
  return parts;
}

/** The template for `parts`: the inverse of parseUriSpec for every list it can produce. */
export function formatUriSpec(parts: readonly UriSpecPart[]): string {
  return parts.map((p) => (p.variable ? `{${p.value}}` : p.value)).join('');
}

/**
 * The URI of `instance` from its `uriSpec` (or `spec`), with Curator's standard variables:
 * `scheme` (`https` when sslPort is set, else `http`), `name`, `id`, `address`, `port`,
 * `ssl-port`, `registration-time-utc`, `service-type` (lowercase), and `[` / `]` for literal
 * braces. `variables` add to them and override them. A null field or an unknown variable becomes
 * the empty string. An instance without a uriSpec gives the empty string.
 *
 * ```ts
 * buildUri({ ...instance, uriSpec: '{scheme}://{address}:{port}/v1' }); // 'http://10.0.0.7:8080/v1'
 * ```
 */
export function buildUri(
  instance: ServiceInstance<unknown>,
  variables: Readonly<Record<string, unknown>> = {},
  spec: string | null = instance.uriSpec,
): string {
  if (spec === null) return '';
  const values: Record<string, unknown> = {
    '[': '{',
    ']': '}',
    scheme: instance.sslPort !== null ? 'https' : 'http',
    name: instance.name,
    id: instance.id,
    address: instance.address,
    port: instance.port,
    'ssl-port': instance.sslPort,
    'registration-time-utc': instance.registrationTimeUTC,
    'service-type': instance.serviceType.toLowerCase(),
    ...variables,
  };
  let uri = '';
  for (const part of parseUriSpec(spec)) {
    if (!part.variable) uri += part.value;
    else {
      const v = Object.hasOwn(values, part.value) ? values[part.value] : undefined;
      // Curator's String.valueOf: a variable's own toString() (a URL, a Date) is what it stands for.
      // eslint-disable-next-line @typescript-eslint/no-base-to-string
      uri += v === null || v === undefined ? '' : String(v);
    }
  }
  return uri;
}
