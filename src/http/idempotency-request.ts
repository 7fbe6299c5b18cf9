// The Idempotency-Key of a request, read at the edge into what the idempotency service needs: the
// key, the caller it belongs to, the operation, and the fingerprint of the request as received
// (method, path, key style, and the body's bytes before any parsing: two bodies that parse alike
// but differ in bytes are two requests, as the IETF draft's "payload" fingerprint has it).
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { IdempotencyRequest } from '../idempotency/service.js';
import type { Principal } from '../auth/principal.js';
import { inflectionOf, operationOf } from './operation.js';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

const bodyDigests = new WeakMap<IncomingMessage, Buffer>();

/** express.json's `verify` hook: keeps the digest of the raw body of a request that carries a key. */
export function noteBodyDigest(req: IncomingMessage, raw: Buffer): void {
  if (req.headers[IDEMPOTENCY_KEY_HEADER] !== undefined) bodyDigests.set(req, createHash('sha256').update(raw).digest());
}

const callerOf = (principal: Principal) => (principal.kind === 'user' ? `user:${principal.userId}` : `api_key:${principal.apiKeyId}`);

/** The request's key, when its operation takes one (the contract says which) and the caller is known. */
export function idempotencyRequestOf(req: Request, res: Response): IdempotencyRequest | undefined {
  const op = operationOf(res);
  const key = req.headers[IDEMPOTENCY_KEY_HEADER];
  const principal = res.locals.principal;
  if (!op?.headerParameters.has(IDEMPOTENCY_KEY_HEADER) || typeof key !== 'string' || !principal) return undefined;
  // Keyed by the idempotency service before it is stored (docs/SAFE-WRITES.md).
  const requestDigest = createHash('sha256')
    .update(`${req.method}\n${req.path}\n${inflectionOf(res)}\n`)
    .update(bodyDigests.get(req) ?? Buffer.alloc(0))
    .digest();
  return { caller: callerOf(principal), operation: op.operationId, key, requestDigest };
}
