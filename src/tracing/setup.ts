// Imported by main.ts before any other module, so that pg is instrumented before it is loaded.
// Tracing is on when the SDK's standard variables name an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and neither
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise. Off, nothing is loaded and
// no request pays anything: the request span's step is not even in the chain (src/http/app.ts).
import { startTracing } from './start.js';

export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED !== 'true' && env.OTEL_TRACES_EXPORTER !== 'none';
}

/** The tracer provider when tracing is on, else undefined. */
export const tracerProvider = tracingConfigured(process.env) ? startTracing() : undefined;
