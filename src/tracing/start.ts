// OpenTelemetry tracing, started only when configured (setup.ts): the SDK's tracer provider with
// W3C propagation and async-context tracking, and the pg instrumentation, which gives every SQL
// statement run inside a request a span of its own (the statement's text with its $n
// placeholders; never its parameter values: enhancedDatabaseReporting stays off). The request
// span is the HTTP edge's (src/http/request-tracing.ts); the password hash's, src/auth/secrets/passwords.ts's.
// The packages are loaded here, on demand, so a process without tracing never loads them.
import { createRequire } from 'node:module';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export const SERVICE_NAME = 'backoffice-api';

/**
 * Registers the global tracer provider and instruments pg, which must not be loaded yet (main.ts
 * imports setup.ts before anything else). `exporter` unset: OTLP over HTTP, configured by the
 * SDK's standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, ...) and batched (OTEL_BSP_*);
 * a test hands an in-memory exporter, exported at once.
 */
export function startTracing(exporter?: SpanExporter): NodeTracerProvider {
  const require = createRequire(import.meta.url);
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes, detectResources, envDetector } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');

  let processor: SpanProcessor;
  if (exporter) processor = new SimpleSpanProcessor(exporter);
  else {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    processor = new BatchSpanProcessor(new OTLPTraceExporter());
  }
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
  const resource = resourceFromAttributes({ 'service.name': SERVICE_NAME }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    // A statement outside a request (migrations, the sweep) starts no trace of its own.
    instrumentations: [new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false })],
  });
  return provider;
}
