/**
 * A path template, curator-x-async's ZPath with ids: '/users/{id}' has one parameter, `id`, that
 * stands for one whole node name. Resolving checks each value is a node name (no '/', not empty,
 * not '.' or '..', nothing ZooKeeper refuses), so a value can never reach another part of the
 * tree; matching does the reverse, for the cache.
 */
import { InvalidArgumentError } from '@tenure/client';
import { pathProblem } from '@tenure/protocol';
import { ModelPathError } from './errors.js';

/** The parameter names of a template, as a union: `ParamNames<'/orgs/{org}/users/{id}'>` is `'org' | 'id'`. */
export type ParamNames<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | ParamNames<Rest> : never;

/** What `.at()` takes: a value for every parameter (a string, or a number or bigint written in decimal). */
export type PathParams<T extends string> = { readonly [K in ParamNames<T>]: string | number | bigint };

/** The parameters read back from a path (always strings). */
export type ResolvedParams<T extends string> = { readonly [K in ParamNames<T>]: string };

type Segment = { kind: 'static'; name: string } | { kind: 'param'; name: string };

const PARAM = /^\{([^{}/]+)\}$/;

export class PathTemplate<T extends string = string> {
  private readonly segments: readonly Segment[];
  /** The parameter names, in order of appearance (a name used twice appears once). */
  readonly parameters: readonly string[];

  constructor(readonly template: T) {
    if (typeof template !== 'string' || !template.startsWith('/'))
      throw new InvalidArgumentError(`model: a path template starts with '/', got ${JSON.stringify(template)}`);
    const names = template === '/' ? [] : template.slice(1).split('/');
    this.segments = names.map((name): Segment => {
      const param = PARAM.exec(name);
      if (param) return { kind: 'param', name: param[1]! };
      if (name.includes('{') || name.includes('}'))
        throw new InvalidArgumentError(
          `model: ${template}: a parameter is a whole node name, like /users/{id}; got ${JSON.stringify(name)}`,
        );
      const problem = nameProblem(name);
      if (problem !== undefined) throw new InvalidArgumentError(`model: ${template}: node name ${JSON.stringify(name)}: ${problem}`);
      return { kind: 'static', name };
    });
    this.parameters = [...new Set(this.segments.flatMap((s) => (s.kind === 'param' ? [s.name] : [])))];
  }

  get isResolved(): boolean {
    return this.parameters.length === 0;
  }

  /** The path with every parameter replaced by its value; ModelPathError for a value that is not a node name. */
  resolve(params: Partial<Record<string, unknown>> = {}): string {
    if (this.segments.length === 0) return '/';
    const parts = this.segments.map((s) => (s.kind === 'static' ? s.name : this.nodeName(s.name, params[s.name])));
    return '/' + parts.join('/');
  }

  /** The parameters of `path` if it is an instance of the template, else undefined. */
  match(path: string): ResolvedParams<T> | undefined {
    const names = path === '/' ? [] : path.slice(1).split('/');
    if (names.length !== this.segments.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const s = this.segments[i]!;
      const name = names[i]!;
      if (s.kind === 'static') {
        if (s.name !== name) return undefined;
      } else if (s.name in params) {
        if (params[s.name] !== name) return undefined;
      } else params[s.name] = name;
    }
    return params as ResolvedParams<T>;
  }

  /**
   * For a template ending in a parameter ('/orgs/{org}/users/{id}'): the parent path resolved
   * with the other parameters ('/orgs/acme/users') and the last parameter's name ('id').
   */
  parentOfLast(params: Partial<Record<string, unknown>> = {}): { path: string; parameter: string } | undefined {
    const last = this.segments[this.segments.length - 1];
    if (last?.kind !== 'param') return undefined;
    const parent = new PathTemplate(('/' + this.template.slice(1).split('/').slice(0, -1).join('/')) as string);
    if (parent.parameters.includes(last.name)) return undefined; // the name is used twice: no free last segment
    return { path: parent.resolve(params), parameter: last.name };
  }

  /** The fixed part before the first parameter ('/users' for '/users/{id}'), and how many levels below it the instances sit. */
  get staticRoot(): { path: string; depth: number } {
    const first = this.segments.findIndex((s) => s.kind === 'param');
    const fixed = first === -1 ? this.segments.length : first;
    const path =
      '/' +
      this.segments
        .slice(0, fixed)
        .map((s) => s.name)
        .join('/');
    return { path, depth: this.segments.length - fixed };
  }

  private nodeName(parameter: string, value: unknown): string {
    let name: string;
    if (typeof value === 'string') name = value;
    else if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') name = String(value);
    else
      throw new ModelPathError(
        this.template,
        parameter,
        value,
        value === undefined ? 'missing' : 'a parameter is a string, a finite number or a bigint',
      );
    const problem = nameProblem(name);
    if (problem !== undefined) throw new ModelPathError(this.template, parameter, value, problem);
    return name;
  }
}

/** Why `name` cannot be one node name, or undefined. */
function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'a node name is not empty';
  if (name.includes('/')) return "a node name has no '/'";
  return pathProblem('/' + name);
}
