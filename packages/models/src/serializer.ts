/**
 * How a model's value becomes a node's bytes and back. The default is JSON as UTF-8 bytes, which
 * is exactly what curator-x-async's JacksonModelSerializer writes (`ObjectMapper.writeValueAsBytes`:
 * compact JSON, UTF-8) and reads (it ignores unknown properties), so Java's ModeledFramework and
 * Tenure share one node.
 */
import { TenureError } from '@tenure/client';

export interface ModelSerializer {
  /** Throws when the value has no bytes (the model reports it as a ModelValidationError, before any write). */
  serialize(value: unknown): Uint8Array;
  /** Throws when the bytes are not a value (the model reports it as a ModelValidationError with the path). */
  deserialize(bytes: Uint8Array): unknown;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const encoder = new TextEncoder();

/** JSON in UTF-8, as Jackson's ObjectMapper writes it. */
export const jsonSerializer: ModelSerializer = {
  serialize(value: unknown): Uint8Array {
    const text = JSON.stringify(value);
    // JSON.stringify answers undefined for undefined, functions and symbols: nothing a node can hold.
    if (text === undefined) throw new TenureError('NOT_SERIALIZABLE', `${typeof value} has no JSON form`);
    return encoder.encode(text);
  },
  deserialize(bytes: Uint8Array): unknown {
    return JSON.parse(utf8.decode(bytes));
  },
};
