/**
 * The record that follows a RequestHeader, for every op except multi/multiRead (docs/zookeeper-wire-protocol.md §4.4),
 * written and read by walking the op's fields in the op table. Nullable jute fields (data, auth,
 * token, reconfig strings) keep null apart from empty; list fields read a null vector as [].
 */
import { ProtocolError } from './errors.js';
import type { JuteReader } from './jute-reader.js';
import type { JuteWriter } from './jute-writer.js';
import { opSpec } from './op-table.js';
import type { Request } from './records.js';

/** Writes the record of a single (non-multi) request. */
export function writeRequestBody(w: JuteWriter, req: Request): void {
  const spec = opSpec(req.type);
  if (spec === undefined) throw new ProtocolError(`cannot encode a request of unknown op ${String((req as { type: unknown }).type)}`);
  const fields = spec.fields;
  const rec = req as unknown as Record<string, unknown>;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    f.kind.write(w, rec[f.name]);
  }
}

/** Reads the record of a single (non-multi) request; undefined when the op code is unknown. */
export function readRequestBody(type: number, r: JuteReader): Request | undefined {
  const spec = opSpec(type);
  if (spec === undefined) return undefined;
  const fields = spec.fields;
  const rec: Record<string, unknown> = { type };
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    rec[f.name] = f.kind.read(r, f.label);
  }
  return rec as unknown as Request;
}
