/**
 * @tenure/otel: OpenTelemetry instrumentation for Tenure. `TenureInstrumentation` turns the
 * client's and the recipes' diagnostics channels into spans and metrics; it needs only
 * @opentelemetry/api (and @opentelemetry/instrumentation), never an SDK.
 */
export { TenureInstrumentation, type TenureInstrumentationConfig } from './instrumentation.js';
export * from './channels.js';
export * from './names.js';
export { PACKAGE_NAME, PACKAGE_VERSION } from './version.js';
