// Tracing into memory, for test/tracing.test.ts: imported by it before any module that loads pg,
// as src/main.ts imports src/tracing/setup.ts (each test file runs in a process of its own).
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../src/tracing/start.js';

export const exporter = new InMemorySpanExporter();
export const provider = startTracing(exporter);
