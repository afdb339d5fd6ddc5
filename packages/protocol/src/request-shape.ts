/**
 * The shape check for request records that arrive without serialization (an in-process transport):
 * whether a record could have been decoded from jute, by the op table's fields. A server answers a
 * record that could not the way ZooKeeper answers a body it cannot read (MARSHALLINGERROR).
 */
import { opSpec } from './op-table.js';

/** Why a request record is malformed, or undefined when it is well formed (unknown ops included). */
export function requestProblem(req: Record<string, unknown>): string | undefined {
  const spec = opSpec(req.type);
  if (spec === undefined) return `unknown op ${String(req.type)}`;
  const fields = spec.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.kind.check(req[f.name])) return `field ${f.name} of op ${String(req.type)} is malformed`;
  }
  if (spec.isMulti) {
    for (const op of req.ops as unknown[]) {
      if (typeof op !== 'object' || op === null) return 'multi op is not a record';
      const t = (op as { type: unknown }).type;
      if (typeof t !== 'number' || opSpec(t)?.inMulti !== true) return `invalid type of op ${String(t)} in multi`;
      const p = requestProblem(op as Record<string, unknown>);
      if (p !== undefined) return p;
    }
  }
  return undefined;
}
