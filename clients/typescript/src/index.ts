// @backoffice/client: the back-office API's typed client (docs/PARTNERS.md).
export { createClient, type BackofficeClient, type ClientOptions, type EventsOptions, type FeedItem, type ListItem, type ListPath, type TokenSetLike } from './client.js';
export type { Tokens, RetryOptions } from './transport.js';
export { serverWaitMs } from './transport.js';
export { ApiError, PreconditionFailedError, RateLimitedError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, InvalidRequestError, NetworkError, type ProblemBody } from './errors.js';
export { verifyWebhook, sign as signWebhook, signedHeaders, WebhookVerificationError, type VerifyOptions, type HeadersLike, type WebhookFailure } from './webhooks.js';
export type { Style, Styles, Paths, Schema, EventType, EventOf, WebhookEvent } from './styles.js';
export { CONTRACT_VERSION } from './contract/operations.js';
