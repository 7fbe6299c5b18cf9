// The exact bytes of a request body that a signature covers: kept, for the operations the
// contract marks `x-signed-body`, by express.json's verify step (before parsing changes them).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Response } from 'express';
import { operationOf } from './operation.js';

const signedBodies = new WeakMap<IncomingMessage, Buffer>();

export function keepSignedBody(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
  if (operationOf(res as Response)?.raw['x-signed-body'] === true) signedBodies.set(req, raw);
}

export const signedBodyOf = (req: IncomingMessage): Buffer | undefined => signedBodies.get(req);
