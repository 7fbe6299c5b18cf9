// The handlers' types (the HTTP edge's), derived from the generated contract: a handler map must serve every operationId,
// take that operation's parameters and body, and return one of its documented success bodies.
import type { operations, webhooks } from '../../generated/openapi.js';
import type { AliasOperationId } from '../../generated/operation-aliases.js';
import type { Logger } from 'pino';
import type { Principal } from '../auth/principal.js';
import type { IdempotencyRequest } from '../idempotency/service.js';
import type { Precondition } from '../revisions/precondition.js';
import type { StreamedJson } from '../streamed-json.js';

/** The operations of `webhooks` are requests the service sends, not ones it serves. */
type SentOperationId = { [K in keyof operations]: operations[K] extends webhooks[keyof webhooks]['post'] ? K : never }[keyof operations];

export type OperationId = Exclude<keyof operations, SentOperationId>;

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : undefined;
type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type SuccessStatus<O> = Extract<keyof ResponsesOf<O>, 200 | 201 | 202 | 204>;
type ParamsOf<O, Where extends 'query' | 'path'> = O extends { parameters: { [W in Where]?: infer P } } ? P : never;

export interface RequestInfo {
  requestId: string;
  /** The client address: the socket's, or X-Forwarded-For's when a trusted proxy is configured. */
  ip: string;
  userAgent: string;
  log: Logger;
  /** The body's bytes as received, on operations marked `x-signed-body` (a signature covers them). */
  signedBody?: Buffer;
}

/** What a handler receives. Typed by the operation object, so aliases with equal shapes share handlers. */
export interface InputOf<O> {
  body: O extends { requestBody: { content: { 'application/json': infer B } } } ? B : O extends { requestBody?: { content: { 'application/json': infer B } } } ? B | undefined : undefined;
  /** The query's parameters: an object always (empty when none were sent), validated by the contract. */
  query: NonNullable<ParamsOf<O, 'query'>>;
  path: ParamsOf<O, 'path'>;
  /** Raw request headers (lower-case names), for handlers that read a credential themselves. */
  headers: Record<string, string | string[] | undefined>;
  /** The authenticated caller; `null` on public operations. */
  principal: Principal | null;
  request: RequestInfo;
  /** The request's Idempotency-Key, on the operations that take one (hand it to `idempotency.once` or `idempotency.onceDrafted`). */
  idempotency: IdempotencyRequest | undefined;
  /** The request's If-Match, on the operations that take one: checked by the service under its write's lock. */
  precondition: Precondition | undefined;
}

export type ResultOf<O> = {
  [S in SuccessStatus<O>]: {
    status: S;
    /** The body; a StreamedJson is written as it is read (src/http/streamed-body.ts), in the client's key style too. */
    body: JsonOf<ResponsesOf<O>[S]> | (JsonOf<ResponsesOf<O>[S]> extends object ? StreamedJson<JsonOf<ResponsesOf<O>[S]>> : never);
    headers?: Record<string, string>;
    /** The resource's id and revision (revisionOf, src/http/entity-tags.ts): the router answers it as an ETag in the client's key style (and 304 to a GET whose If-None-Match holds). */
    revision?: string;
  };
}[SuccessStatus<O>];

type HandlerOf<O> = (input: InputOf<O>) => Promise<ResultOf<O>>;

export type Handler<K extends OperationId> = HandlerOf<operations[K]>;

/** The operations a handler serves: every one but the aliases (x-path-aliases), served by their originals' handlers. */
export type ServedOperationId = Exclude<OperationId, AliasOperationId>;

export type HandlerMap = { [K in ServedOperationId]: HandlerOf<operations[K]> };

/** The shape the router sees once the operation is no longer known statically. */
export interface AnyResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  revision?: string;
}
