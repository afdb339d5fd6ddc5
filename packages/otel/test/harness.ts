/**
 * An SDK set-up as an application would have it, in memory: a tracer provider with an
 * InMemorySpanExporter, a meter provider with an in-memory metric exporter read on demand, the
 * async-hooks context manager, and a TenureInstrumentation enabled by hand on those providers.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { TenureInstrumentation } from '../src/index.js';

export interface Telemetry {
  instrumentation: TenureInstrumentation;
  tracerProvider: BasicTracerProvider;
  spans(): ReadableSpan[];
  /** Collects now and returns the metric of that name (undefined if it has no point yet). */
  metric(name: string): Promise<MetricData | undefined>;
  reset(): void;
  shutdown(): Promise<void>;
}

export function startTelemetry(): Telemetry {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const instrumentation = new TenureInstrumentation({ enabled: false });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.setMeterProvider(meterProvider);
  instrumentation.enable();
  return {
    instrumentation,
    tracerProvider,
    spans: () => spanExporter.getFinishedSpans(),
    async metric(name) {
      metricExporter.reset();
      await reader.forceFlush();
      const all = metricExporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
      return all.find((m) => m.descriptor.name === name);
    },
    reset: () => spanExporter.reset(),
    async shutdown() {
      instrumentation.disable();
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
      context.disable();
    },
  };
}

/** A data point's attributes and value, for readable assertions. */
export function points(metric: MetricData | undefined): Array<{ attributes: Record<string, unknown>; value: unknown }> {
  return (metric?.dataPoints ?? []).map((p: DataPoint<unknown>) => ({ attributes: { ...p.attributes }, value: p.value }));
}

/** A histogram point's count. */
export function countOf(value: unknown): number {
  return (value as Histogram).count;
}

/** A span's duration in milliseconds. */
export function durationMs(span: ReadableSpan): number {
  return span.duration[0] * 1000 + span.duration[1] / 1e6;
}
