/**
 * @tenure/models: typed models over ZooKeeper path templates, after curator-x-async's
 * ModeledFramework. Values are checked by a Standard Schema (zod, valibot, arktype) on every write
 * and read, and stored as the JSON Curator's JacksonModelSerializer writes, so Java's
 * ModeledFramework reads and writes the same nodes.
 */
export { model, Model, type ModelOptions, type AtArguments, type ListArguments, type LastParam } from './model.js';
export { ModelNode, type SetOptions, type DeleteModelOptions } from './model-node.js';
export { ModelWatch, type ModelSnapshot, type ModelWatchOptions } from './model-watch.js';
export { CachedModel, type CachedInstance, type ModelChange, type CachedModelEvents } from './cached-model.js';
export type { UpdateOptions } from './versioned-update.js';
export { PathTemplate, type ParamNames, type PathParams, type ResolvedParams } from './path-template.js';
export { jsonSerializer, type ModelSerializer } from './serializer.js';
export { isStandardSchema, type ModelSchema, type StandardSchemaV1 } from './schema.js';
export { ModelValidationError, ModelPathError, UpdateConflictError } from './errors.js';
export type { ValueIterator } from './value-stream.js';
// The errors users meet, so that one import suffices.
export { NoNodeError, BadVersionError, ClosedError, TimeoutError, AbortError, OutcomeUnknownError } from '@tenure/client';
