/** The instrumentation scope: this package's name and version, as OpenTelemetry names a tracer and a meter. */
export const PACKAGE_NAME = '@tenure/otel';
export const PACKAGE_VERSION = '0.1.0';
