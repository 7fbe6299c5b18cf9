// `backoffice api-keys create|update|revoke`: the operator's way to issue a key (the secret is
// printed once, on stdout, and never stored), to change one (name, expiry, narrower permissions,
// rate limit, IP allowlist, remaining uses and their refill, metadata) and to revoke one. What is sent is checked as the API checks it: the
// contract's schema first (src/contract/request-body.ts, the same words as a 400 of the API), then
// the same service (docs/PARTNER-KEYS.md).
import { InvalidArgumentError, type Command } from 'commander';
import { ApiKeyService, type RateLimitInput } from '../api-keys/service.js';
import type { UsesRefill } from '../api-keys/uses.js';
import { OPERATOR } from '../auth/authority.js';
import { isPermission } from '../auth/permissions.js';
import { systemClock } from '../clock.js';
import { DomainError, validationFailed } from '../errors.js';
import { requestBodyErrors } from '../contract/request-body.js';
import { assertNoForbiddenKeys } from '../contract/inflection.js';
import { UUID } from '../uuid.js';
import { withDatabase } from './database.js';

function permissionList(value: string): string[] {
  const list = value.split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = list.filter((p) => !isPermission(p));
  if (list.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`unknown permission(s): ${unknown.join(', ') || '(none given)'}`);
  return list;
}

function futureDate(value: string): string {
  if (Number.isNaN(new Date(value).getTime())) throw new InvalidArgumentError('expected an ISO 8601 date, e.g. 2027-05-01T00:00:00Z');
  return new Date(value).toISOString();
}

function keyId(value: string): string {
  if (!UUID.test(value.toLowerCase())) throw new InvalidArgumentError('expected the key id (a UUID)');
  return value;
}

// (An option's parser cannot answer null: commander takes it for a missing value. `none` and `any`
// stay words until the body is built.)

/** `N/S`: N requests per S seconds, as API_KEY_DEFAULT_RATE_LIMIT is written; `none`: no limit of its own. Ranges: the contract's. */
function rateLimitOption(value: string): RateLimitInput | 'none' {
  if (value === 'none') return value;
  const match = /^(\d+)\/(\d+)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('expected N/S (N requests per S seconds), e.g. 100/60, or none');
  return { requests: Number(match[1]), per_seconds: Number(match[2]) };
}

/** Comma-separated addresses and CIDR ranges; `any`: from anywhere. */
function allowedIpsOption(value: string): string[] | 'any' {
  if (value === 'any') return value;
  return value.split(',').map((entry) => entry.trim()).filter(Boolean);
}

/** A count of uses; `none`: not usage-limited. The range is the contract's. */
function usesOption(value: string): number | 'none' {
  if (value === 'none') return value;
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('expected a number of uses, e.g. 1000, or none');
  return Number(value);
}

/** `AMOUNT/daily` or `AMOUNT/monthly`: the uses are set to AMOUNT at each UTC day or month; `none`: never refilled. */
function usesRefillOption(value: string): UsesRefill | 'none' {
  if (value === 'none') return value;
  const match = /^(\d+)\/(daily|monthly)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('expected AMOUNT/daily or AMOUNT/monthly, e.g. 1000/daily, or none');
  return { amount: Number(match[1]), interval: match[2] as UsesRefill['interval'] };
}

/** A JSON object of the partner's own; `none`: no metadata. */
function metadataOption(value: string): Record<string, unknown> | 'none' {
  if (value === 'none') return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected a JSON object, e.g. \'{"customer_id":"cus_8421"}\', or none');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError('expected a JSON object, or none');
  return parsed as Record<string, unknown>;
}

type UsesOptions = { uses?: number | 'none'; usesRefill?: UsesRefill | 'none'; metadata?: Record<string, unknown> | 'none' };

/** The fields of the uses and metadata options given, as the API's body writes them. */
const usesFields = (options: UsesOptions) => ({
  ...(options.uses !== undefined && { remaining_uses: options.uses === 'none' ? null : options.uses }),
  ...(options.usesRefill !== undefined && { uses_refill: options.usesRefill === 'none' ? null : options.usesRefill }),
  ...(options.metadata !== undefined && { metadata: options.metadata === 'none' ? null : options.metadata }),
});

/** `never`: no expiration date (not recommended). */
const expiryOption = (value: string) => (value === 'never' ? value : futureDate(value));

/** The fields of the options given, as the API's body writes them (a word for none: null). */
const limitFields = (options: { rateLimit?: RateLimitInput | 'none'; allowedIps?: string[] | 'any' }) => ({
  ...(options.rateLimit !== undefined && { rate_limit: options.rateLimit === 'none' ? null : options.rateLimit }),
  ...(options.allowedIps !== undefined && { allowed_ips: options.allowedIps === 'any' ? null : options.allowedIps }),
});

/** The body as the API would receive it, refused with the API's words when the contract refuses it. */
function checked<T extends object>(schemaName: string, body: T): T {
  // The API's edge refuses these keys before its validator (src/contract/inflection.ts); so here.
  assertNoForbiddenKeys(body, []);
  const errors = requestBodyErrors(schemaName, body);
  if (errors.length > 0) throw validationFailed(errors);
  return body;
}

const describeLimits = (key: {
  rate_limit_requests: number | null;
  rate_limit_per_seconds: number | null;
  allowed_ips: string[] | null;
  uses_remaining: number | null;
  uses_refill_interval: 'day' | 'month' | null;
  uses_refill_amount: number | null;
}) =>
  `rate limit ${key.rate_limit_requests === null ? 'none of its own' : `${key.rate_limit_requests} per ${key.rate_limit_per_seconds} s`}, allowed from ${key.allowed_ips?.join(', ') ?? 'anywhere'}` +
  (key.uses_remaining === null
    ? ''
    : `, ${key.uses_remaining} uses left${key.uses_refill_interval === null ? ', never refilled' : `, set to ${key.uses_refill_amount} each ${key.uses_refill_interval} (UTC)`}`);

/** Service errors become one readable line and exit code 1, as every other CLI error. */
function plain(err: unknown): never {
  if (err instanceof DomainError) throw new Error(err.detail);
  throw err;
}

export function registerApiKeys(program: Command): void {
  const keys = program.command('api-keys').description('API keys for third-party applications');
  keys
    .command('create')
    .description('Create an API key and print its secret (shown this once)')
    .requiredOption('--name <name>', 'unique name of the key')
    .requiredOption('--permissions <list>', 'comma-separated permissions, e.g. users.list,users.read', permissionList)
    .option('--expires-at <date>', 'expiration date (recommended), ISO 8601', futureDate)
    .option('--rate-limit <N/S>', 'at most N requests per S seconds, e.g. 100/60 (default: the deployment\'s API_KEY_DEFAULT_RATE_LIMIT)', rateLimitOption)
    .option('--allowed-ips <list>', 'comma-separated addresses and CIDR ranges it may be used from, e.g. 203.0.113.0/24,2001:db8::/48 (default: anywhere)', allowedIpsOption)
    .option('--uses <N>', 'the number of requests it may make in all (default: not limited)', usesOption)
    .option('--uses-refill <AMOUNT/INTERVAL>', 'set its uses to AMOUNT at each UTC day or month: 1000/daily, 20000/monthly (needs --uses)', usesRefillOption)
    .option('--metadata <json>', 'a JSON object of your own, returned when the key is read (at most 4 KiB)', metadataOption)
    .action((options: { name: string; permissions: string[]; expiresAt?: string; rateLimit?: RateLimitInput | 'none'; allowedIps?: string[] | 'any' } & UsesOptions) =>
      withDatabase(async ({ db }) => {
        const body = checked('ApiKeyCreateRequest', {
          name: options.name,
          permissions: options.permissions,
          ...(options.expiresAt !== undefined && { expires_at: options.expiresAt }),
          ...limitFields(options),
          ...usesFields(options),
        });
        const service = new ApiKeyService({ db, clock: systemClock });
        const create = async () => {
          const draft = service.draft(OPERATOR, body);
          return db.transaction().execute((trx) => service.create(trx, OPERATOR, draft));
        };
        const { key, secret } = await create().catch(plain);
        process.stderr.write(`Created API key ${key.id} (${key.name})${key.expires_at ? '' : ' without an expiration date (not recommended)'}; ${describeLimits(key)}.\n`);
        process.stderr.write('Copy the secret now: it is never shown again.\n');
        process.stdout.write(`${secret}\n`);
      }),
    );
  keys
    .command('update')
    .description('Change an API key: its name, expiration date, permissions (narrowing only), rate limit, IP allowlist, uses or metadata')
    .argument('<id>', 'id of the key', keyId)
    .option('--name <name>', 'a new unique name')
    .option('--expires-at <date>', 'a new expiration date, ISO 8601, or never', expiryOption)
    .option('--permissions <list>', 'comma-separated permissions, among those it holds', permissionList)
    .option('--rate-limit <N/S>', 'at most N requests per S seconds, e.g. 100/60, or none (the deployment\'s default then applies)', rateLimitOption)
    .option('--allowed-ips <list>', 'comma-separated addresses and CIDR ranges, or any', allowedIpsOption)
    .option('--uses <N>', 'set its remaining uses to N (not added), or none to remove the limit', usesOption)
    .option('--uses-refill <AMOUNT/INTERVAL>', 'set its uses to AMOUNT at each UTC day or month (1000/daily, 20000/monthly), or none', usesRefillOption)
    .option('--metadata <json>', 'replace its metadata with this JSON object, or none', metadataOption)
    .action((id: string, options: { name?: string; expiresAt?: string; permissions?: string[]; rateLimit?: RateLimitInput | 'none'; allowedIps?: string[] | 'any' } & UsesOptions) =>
      withDatabase(async ({ db }) => {
        const body = {
          ...(options.name !== undefined && { name: options.name }),
          ...(options.expiresAt !== undefined && { expires_at: options.expiresAt === 'never' ? null : options.expiresAt }),
          ...(options.permissions !== undefined && { permissions: options.permissions }),
          ...limitFields(options),
          ...usesFields(options),
        };
        if (Object.keys(body).length === 0) throw new Error('Nothing to change: give --name, --expires-at, --permissions, --rate-limit, --allowed-ips, --uses, --uses-refill or --metadata.');
        const key = await new ApiKeyService({ db, clock: systemClock }).update(OPERATOR, id, checked('ApiKeyUpdateRequest', body)).catch(plain);
        process.stdout.write(`Updated API key ${key.id} (${key.name}): ${describeLimits(key)}.\n`);
      }),
    );
  keys
    .command('revoke')
    .description('Revoke an API key, effective on the next request')
    .argument('<id>', 'id of the key', keyId)
    .action((id: string) =>
      withDatabase(async ({ db }) => {
        await new ApiKeyService({ db, clock: systemClock }).revoke(OPERATOR, id).catch(plain);
        process.stdout.write(`Revoked API key ${id}.\n`);
      }),
    );
}
