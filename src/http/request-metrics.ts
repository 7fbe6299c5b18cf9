// Observes every answered request for the metrics: its operation (the contract's operationId,
// matched once by operation.ts; never the raw path), status and duration. One listener shared by
// every response (`this` is the response), not a closure per request.
import { performance } from 'node:perf_hooks';
import type { RequestHandler, Response } from 'express';
import { operationOf } from './operation.js';

/** Where an answered request is counted: src/metrics/registry.ts's observeRequest. */
export type ObserveRequest = (operationId: string | undefined, status: number, seconds: number) => void;

declare module 'express-serve-static-core' {
  interface Locals {
    /** When the request met the first step, in performance.now() milliseconds. */
    receivedAt?: number;
  }
}

export function requestMetrics(observe: ObserveRequest): RequestHandler {
  function observeAnswer(this: Response) {
    observe(operationOf(this)?.operationId, this.statusCode, (performance.now() - this.locals.receivedAt!) / 1000);
  }
  return (_req, res, next) => {
    res.locals.receivedAt = performance.now();
    res.on('close', observeAnswer);
    next();
  };
}
