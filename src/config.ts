// Service configuration, read from environment variables and validated once at start-up.
import { readFileSync } from 'node:fs';
import { bool, cleanEnv, num, port, str, url, makeValidator } from 'envalid';
import { parseSmtpUrl } from './smtp-url.js';

/** The published retry schedule of webhook deliveries (docs/EVENTS.md): seconds before each retry, about three days in all. */
export const DEFAULT_RETRY_SCHEDULE_S = [5, 60, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 72_000] as const;

/**
 * How long what the service keeps for a while is kept, by default (days; docs/PRIVACY.md says
 * why): the events of the feed and webhooks (with their deliveries), finished deliveries (with the
 * partner's answer), and the messages of the mail outbox (a recipient's address and a link).
 */
export const RETENTION_DEFAULT_DAYS = { events: 30, webhookDeliveries: 30, messages: 30, signInAddresses: 90 } as const;

/** Express "trust proxy" value: false, true, a hop count, or a comma-separated list of addresses/subnets. */
const trustProxy = makeValidator<boolean | number | string>((input) => {
  if (input === 'false' || input === '') return false;
  if (input === 'true') return true;
  if (/^\d+$/.test(input)) return Number(input);
  if (/^[\w.:/,\s-]+$/.test(input)) return input;
  throw new Error('expected false, true, a hop count, or a list of addresses/subnets');
});

/** A rate limit written `N/S`: N requests per S seconds (N 1-1,000,000, S 1-86,400); empty or `off`: none. */
const rateLimit = makeValidator<{ requests: number; perSeconds: number } | null>((input) => {
  if (input === '' || input === 'off') return null;
  const match = /^(\d{1,7})\/(\d{1,5})$/.exec(input.trim());
  const requests = Number(match?.[1]);
  const perSeconds = Number(match?.[2]);
  if (!match || requests < 1 || requests > 1_000_000 || perSeconds < 1 || perSeconds > 86_400) {
    throw new Error('expected N/S (N requests per S seconds, N 1-1000000, S 1-86400), or off');
  }
  return { requests, perSeconds };
});

/** Settings whose meaning changed: starting with one would silently apply a different rule. */
const RETIRED: Record<string, string> = {
  SIGN_IN_MAX_FAILURES_PER_EMAIL:
    'replaced by SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP (failures now block one e-mail from one client IP; the account as a whole only slows down, see SIGN_IN_ACCOUNT_SLOWDOWN_AFTER)',
};

/** A key of SEALING_KEYS: its id (stored beside what it sealed) and its 32 bytes. */
export interface SealingKey {
  id: string;
  key: Buffer;
}

/**
 * SEALING_KEYS (or the file SEALING_KEYS_FILE): one key a line (or comma-separated), `<id>:<32
 * bytes in base64>`; the first seals, the others only open what they sealed before (a rotation).
 * `#` starts a comment line. docs/DEPLOYMENT.md, "The sealing keys".
 */
export function parseSealingKeys(text: string, source: string): SealingKey[] {
  const keys: SealingKey[] = [];
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => !line.startsWith('#'))
    .flatMap((line) => line.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const match = /^([A-Za-z0-9_-]{1,40}):([A-Za-z0-9+/=_-]+)$/.exec(entry);
    const key = match ? Buffer.from(match[2]!, 'base64') : undefined;
    if (!match || key?.length !== 32) throw new ConfigError(`Invalid configuration:\n  ${source}: expected lines <id>:<32 bytes in base64> (make one with \`backoffice sealing-keys new <id>\`)`);
    if (keys.some((k) => k.id === match[1])) throw new ConfigError(`Invalid configuration:\n  ${source}: the key id ${match[1]} appears twice`);
    keys.push({ id: match[1]!, key });
  }
  if (keys.length === 0) throw new ConfigError(`Invalid configuration:\n  ${source}: no key`);
  return keys;
}

function sealingKeysOf(inline: string, file: string, databaseUrl: string | undefined): SealingKey[] | null {
  if (inline !== '' && file !== '') throw new ConfigError('Invalid configuration:\n  SEALING_KEYS and SEALING_KEYS_FILE: set one, not both');
  if (inline !== '') return parseSealingKeys(inline, 'SEALING_KEYS');
  if (file !== '') {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`Invalid configuration:\n  SEALING_KEYS_FILE: cannot read ${file} (${(err as Error).message})`);
    }
    return parseSealingKeys(text, 'SEALING_KEYS_FILE');
  }
  // The embedded database keeps its own key beside it (src/auth/secrets/sealing-keys.ts); a real one never.
  if (databaseUrl) throw new ConfigError('Invalid configuration:\n  SEALING_KEYS_FILE (or SEALING_KEYS) is required with DATABASE_URL: the key that seals second-factor secrets is kept out of the database (docs/DEPLOYMENT.md)');
  return null;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const retired = Object.keys(RETIRED).filter((name) => env[name] !== undefined);
  if (retired.length > 0) throw new ConfigError(`Invalid configuration:\n${retired.map((name) => `  ${name}: ${RETIRED[name]}`).join('\n')}`);
  const e = cleanEnv(
    env,
    {
      NODE_ENV: str({ choices: ['development', 'test', 'production'], default: 'development' }),
      HOST: str({ default: '0.0.0.0', desc: 'Address to listen on' }),
      PORT: port({ default: 3000 }),
      WORKERS: num({ default: 1, desc: 'Processes of the service on this host (Node cluster); 1: this process serves' }),
      METRICS_HOST: str({ default: '127.0.0.1', desc: 'Address of the metrics listener (GET /metrics)' }),
      METRICS_PORT: num({ default: 9464, desc: 'Port of the metrics listener; 0 turns it off' }),
      DATABASE_URL: url({ default: undefined, desc: 'PostgreSQL URL; unset means the embedded PGlite database' }),
      SEALING_KEYS: str({ default: '', desc: 'The keys sealing second-factor secrets, <id>:<base64 of 32 bytes>, the first sealing; or SEALING_KEYS_FILE' }),
      SEALING_KEYS_FILE: str({ default: '', desc: 'A file of the sealing keys, one <id>:<base64> a line, the first sealing' }),
      DATA_DIR: str({ default: './data', desc: 'Where the embedded database keeps its files' }),
      DB_POOL_MAX: num({ default: 10, desc: 'Connections per process; keep processes x this under max_connections' }),
      DB_ACQUIRE_TIMEOUT_MS: num({ default: 3000, desc: 'Wait for a pooled connection before answering 503' }),
      DB_STATEMENT_TIMEOUT_MS: num({ default: 5000, desc: 'Server-side statement timeout' }),
      DB_PREPARED_STATEMENTS: bool({ default: true, desc: 'Named prepared statements; false behind a pooler in transaction mode (PgBouncer before 1.21)' }),
      LOG_LEVEL: str({ choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' }),
      VALIDATE_RESPONSES: bool({ default: undefined, desc: 'Validate responses against the contract (default: on outside production)' }),
      TRUST_PROXY: trustProxy({ default: false, desc: 'Which proxies may set X-Forwarded-For and X-Request-Id' }),
      BODY_LIMIT_BYTES: num({ default: 100 * 1024 }),
      SHUTDOWN_GRACE_MS: num({ default: 10_000, desc: 'How long in-flight requests may take after SIGTERM' }),
      SESSION_LIFETIME_S: num({ default: 30 * 24 * 3600, desc: 'Absolute lifetime of a session (seconds)' }),
      SESSION_IDLE_TIMEOUT_S: num({ default: 7 * 24 * 3600, desc: 'A session unused this long ends (seconds)' }),
      REFRESH_GRACE_S: num({ default: 10, desc: 'How long a used refresh token still returns the same new token set' }),
      SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: num({ default: 10, desc: 'Failed sign-ins of one e-mail from one client IP within the window before that pair gets 429' }),
      SIGN_IN_MAX_FAILURES_PER_IP: num({ default: 100, desc: 'Failed sign-ins per client IP (any e-mail) within the window before 429' }),
      SIGN_IN_ACCOUNT_SLOWDOWN_AFTER: num({ default: 20, desc: 'Failed sign-ins of one e-mail (any IP) within the window after which its attempts are spaced out' }),
      SIGN_IN_ACCOUNT_MAX_DELAY_S: num({ default: 60, desc: 'Longest spacing of a slowed-down account\'s attempts (seconds)' }),
      SIGN_IN_THROTTLE_WINDOW_S: num({ default: 15 * 60, desc: 'Sliding window of the sign-in throttle (seconds)' }),
      SWEEP_INTERVAL_S: num({ default: 300, desc: 'How often each process deletes expired sign-in attempts and old sessions (seconds); 0: never' }),
      SESSION_RETENTION_DAYS: num({ default: 30, desc: 'How long a session that is over (with its tokens) is kept before the sweep deletes it' }),
      EVENT_RETENTION_DAYS: num({ default: RETENTION_DEFAULT_DAYS.events, desc: 'How long the events of GET /events and webhooks are kept (their deliveries go with them)' }),
      WEBHOOK_DELIVERY_RETENTION_DAYS: num({ default: RETENTION_DEFAULT_DAYS.webhookDeliveries, desc: 'How long a finished webhook delivery (with the partner\'s answer) is kept; one still being retried stays' }),
      MESSAGE_RETENTION_DAYS: num({ default: RETENTION_DEFAULT_DAYS.messages, desc: 'How long a message of the mail outbox (its recipient, subject and text) is kept, sent or not' }),
      AUDIT_RETENTION_DAYS: num({ default: 400, desc: 'How long audit events are kept before the sweep deletes them (whole sealed batches)' }),
      SIGN_IN_ADDRESS_RETENTION_DAYS: num({ default: RETENTION_DEFAULT_DAYS.signInAddresses, desc: 'How long the client address and user agent of an audit event are kept before the sweep erases them (the event and its seal stay; docs/ERASURE.md)' }),
      ADMIN_SECOND_FACTOR: str({ choices: ['required', 'optional'], default: 'required', desc: 'Whether holders of the built-in admin role must have a second factor' }),
      PASSKEY_RP_ID: str({ default: 'localhost', desc: 'WebAuthn relying-party id: the host name passkeys are bound to (the site\'s domain, or a parent of it)' }),
      PASSKEY_RP_NAME: str({ default: 'Back office', desc: 'The name the browser shows when making a passkey' }),
      PASSKEY_ORIGINS: str({ default: 'http://localhost:3000', desc: 'Comma-separated origins (scheme://host[:port]) the back office is served from; a passkey answer from any other is refused' }),
      API_KEY_DEFAULT_RATE_LIMIT: rateLimit({ default: undefined, desc: 'The rate limit of a key that carries none (N/S); off: such keys are not limited' }),
      API_KEY_CACHE_SIZE: num({ default: 10_000, desc: 'API keys each process keeps in memory, in step with PostgreSQL through LISTEN/NOTIFY (and as many unknown digests); 0: every request asks the database. Off on the embedded database' }),
      API_KEY_CACHE_RECONNECT_MS: num({ default: 100, desc: 'After its LISTEN connection is lost, how long a process waits before connecting again (ms), doubled after each failure up to 5 s; meanwhile keys are verified by the database' }),
      USER_RATE_LIMIT: rateLimit({ default: { requests: 120, perSeconds: 60 }, desc: 'Per signed-in person, on the operations marked x-user-rate-limit (N/S); off: none' }),
      RATE_LIMIT_SYNC_INTERVAL_MS: num({ default: 1000, desc: 'How often each process reconciles its rate-limit counters and writes key usage (ms); 0: only when a limit needs it' }),
      RATE_LIMIT_UNSYNCED_FRACTION: num({ default: 0.1, desc: 'Share of a limit one process may admit before reconciling: the bound on going over is (processes - 1) x this' }),
      LEAK_REPORT_KEYS_FILE: str({ default: '', desc: 'JSON file of the public keys that sign leaked-key reports (GitHub secret scanning format); empty: POST /api-keys/leaked refuses every report' }),
      TEST_CLOCK_FILE: str({ default: '', desc: 'Tests only (NODE_ENV=test): a file holding the time the service reads as now' }),
      WEBHOOKS_ALLOW_PRIVATE_URLS: bool({ default: false, desc: 'Development and tests only: webhook URLs may be plain http and private addresses (cloud metadata addresses stay refused)' }),
      WEBHOOKS_TIMEOUT_MS: num({ default: 10_000, desc: 'How long one webhook attempt may take, answer included (ms)' }),
      WEBHOOKS_RETRY_SCHEDULE_S: str({ default: DEFAULT_RETRY_SCHEDULE_S.join(','), desc: 'Seconds before each retry of a failed delivery, comma-separated (each ±20 %)' }),
      WEBHOOKS_DISABLE_AFTER_DAYS: num({ default: 5, desc: 'An endpoint whose every delivery failed this long is disabled' }),
      WEBHOOKS_POLL_INTERVAL_MS: num({ default: 1000, desc: 'How often each process looks for due deliveries besides being woken by NOTIFY (ms)' }),
      WEBHOOKS_CONCURRENCY: num({ default: 32, desc: 'Deliveries in flight per process' }),
      WEBHOOKS_DELIVER: bool({ default: true, desc: 'Whether this process sends webhook deliveries; false: it writes events and deliveries only, and processes started with true send them (a deployment may keep delivery off the processes that serve requests)' }),
      OIDC_REDIRECT_URI: url({ default: 'http://localhost:3000/sign-in/oidc', desc: 'Where identity providers send people back (the back office page /sign-in/oidc of this deployment); register it at each provider' }),
      OIDC_FLOW_TTL_S: num({ default: 600, desc: 'How long a sign-in with an identity provider may take, from start to callback (seconds)' }),
      OIDC_ALLOW_INSECURE_ISSUERS: bool({ default: false, desc: 'Development and tests only, refused with NODE_ENV=production: identity providers may be plain http and on private addresses, loopback included (cloud metadata addresses stay refused)' }),
      OIDC_MAX_FLOWS_PER_IP: num({ default: 30, desc: 'Sign-ins with an identity provider started and not completed, and refused callbacks, per client IP within the sign-in throttle window before 429' }),
      SMTP_URL: str({ default: '', desc: 'Where mail is sent: smtp://[user:password@]host[:port] (STARTTLS when offered; ?starttls=required) or smtps://... (TLS); empty: the development mailbox outside production' }),
      MAIL_FROM: str({ default: 'Back office <no-reply@backoffice.local>', desc: 'The From of every message' }),
      MAIL_DEV_MAILBOX: str({ choices: ['', 'on', 'off'], default: '', desc: 'The development mailbox (messages kept and shown to administrators in the back office, nothing sent): on by default without SMTP_URL outside production; refused with NODE_ENV=production' }),
      MAIL_OUTBOX_ONLY: bool({ default: false, desc: 'Production without SMTP_URL: messages are written to the outbox and nothing sends them (set it to say so; another deployment may send them)' }),
      MAIL_SEND: bool({ default: true, desc: 'Whether this process sends the outbox of mail (as WEBHOOKS_DELIVER)' }),
      MAIL_POLL_INTERVAL_MS: num({ default: 1000, desc: 'How often each sending process looks for messages due (ms)' }),
      MAIL_BATCH: num({ default: 50, desc: 'Messages claimed per round and sent at once by one process' }),
      MAIL_TIMEOUT_MS: num({ default: 10_000, desc: 'How long connecting to and talking with the SMTP server may take per step (ms)' }),
      PASSWORD_RESET_TTL_MINUTES: num({ default: 30, desc: 'How long a password recovery link works (minutes, 5 to 1440)' }),
      PASSWORD_RESET_MAX_PER_ADDRESS: num({ default: 5, desc: 'Recovery requests for one address from one client address within the sign-in throttle window before 429 (and, from every address, before they are spaced out)' }),
      PASSWORD_RESET_MAX_PER_IP: num({ default: 30, desc: 'Recovery requests from one client address, whatever the e-mail, within the sign-in throttle window before 429' }),
      BOOTSTRAP_ADMIN_EMAIL: str({ default: 'admin@backoffice.local', desc: 'E-mail of the first administrator created on an empty embedded database' }),
    },
    {
      // Name every bad variable in one message and throw instead of exiting, so callers decide.
      // Never the value itself: envalid quotes it (`Invalid url: "..."`), and a DATABASE_URL that
      // does not parse (a `/` or `#` left unencoded in its password) would print its password to
      // standard error, into the logs.
      reporter: ({ errors }) => {
        const bad = Object.entries(errors);
        if (bad.length > 0) {
          const withoutValue = (name: string, message: string) => {
            const value = env[name];
            return typeof value === 'string' && value !== '' ? message.split(value).join('(the value, not shown)') : message;
          };
          const lines = bad.map(([name, err]) => `  ${name}: ${withoutValue(name, (err as Error).message)}`);
          throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
        }
      },
    },
  );
  if (!Number.isInteger(e.WORKERS) || e.WORKERS < 1 || e.WORKERS > 256) throw new ConfigError('Invalid configuration:\n  WORKERS: expected a whole number of processes from 1 to 256');
  if (!Number.isInteger(e.METRICS_PORT) || e.METRICS_PORT < 0 || e.METRICS_PORT > 65_535) {
    throw new ConfigError('Invalid configuration:\n  METRICS_PORT: expected a port number, or 0 for no metrics listener');
  }
  // Retry-After is at most a day in the contract: no throttle may make anyone wait longer.
  for (const name of ['SIGN_IN_THROTTLE_WINDOW_S', 'SIGN_IN_ACCOUNT_MAX_DELAY_S'] as const) {
    if (e[name] < 1 || e[name] > 86_400) throw new ConfigError(`Invalid configuration:\n  ${name}: expected 1 to 86400 seconds`);
  }
  for (const name of ['SESSION_RETENTION_DAYS', 'EVENT_RETENTION_DAYS', 'WEBHOOK_DELIVERY_RETENTION_DAYS', 'MESSAGE_RETENTION_DAYS', 'SIGN_IN_ADDRESS_RETENTION_DAYS'] as const) {
    if (!Number.isInteger(e[name]) || e[name] < 1 || e[name] > 36_500) throw new ConfigError(`Invalid configuration:\n  ${name}: expected a whole number of days from 1 to 36500`);
  }
  if (!(e.RATE_LIMIT_UNSYNCED_FRACTION >= 0 && e.RATE_LIMIT_UNSYNCED_FRACTION <= 1)) {
    throw new ConfigError('Invalid configuration:\n  RATE_LIMIT_UNSYNCED_FRACTION: expected a number from 0 to 1');
  }
  const retrySchedule = e.WEBHOOKS_RETRY_SCHEDULE_S.split(',').map((v) => Number(v.trim()));
  if (retrySchedule.some((v) => !(v >= 0 && v <= 7 * 86_400))) throw new ConfigError('Invalid configuration:\n  WEBHOOKS_RETRY_SCHEDULE_S: expected seconds (0 to 604800), comma-separated');
  const passkeys = passkeyConfig(e.PASSKEY_RP_ID, e.PASSKEY_RP_NAME, e.PASSKEY_ORIGINS);
  if (!Number.isInteger(e.OIDC_FLOW_TTL_S) || e.OIDC_FLOW_TTL_S < 30 || e.OIDC_FLOW_TTL_S > 3600) throw new ConfigError('Invalid configuration:\n  OIDC_FLOW_TTL_S: expected 30 to 3600 seconds');
  if (e.OIDC_ALLOW_INSECURE_ISSUERS && e.NODE_ENV === 'production') {
    throw new ConfigError('Invalid configuration:\n  OIDC_ALLOW_INSECURE_ISSUERS: not with NODE_ENV=production (it lets an administrator make the service call plain http and its own network; for a local development provider only)');
  }
  const mail = mailConfig(e);
  if (!Number.isInteger(e.PASSWORD_RESET_TTL_MINUTES) || e.PASSWORD_RESET_TTL_MINUTES < 5 || e.PASSWORD_RESET_TTL_MINUTES > 1440) {
    throw new ConfigError('Invalid configuration:\n  PASSWORD_RESET_TTL_MINUTES: expected 5 to 1440 minutes');
  }
  for (const name of ['PASSWORD_RESET_MAX_PER_ADDRESS', 'PASSWORD_RESET_MAX_PER_IP'] as const) {
    if (!Number.isInteger(e[name]) || e[name] < 1 || e[name] > 10_000) throw new ConfigError(`Invalid configuration:\n  ${name}: expected 1 to 10000 requests`);
  }
  if (e.TEST_CLOCK_FILE !== '' && e.NODE_ENV !== 'test') throw new ConfigError('Invalid configuration:\n  TEST_CLOCK_FILE: only with NODE_ENV=test');
  return {
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    workers: e.WORKERS,
    /** The metrics listener; undefined when METRICS_PORT is 0. */
    metrics: e.METRICS_PORT === 0 ? undefined : { host: e.METRICS_HOST, port: e.METRICS_PORT },
    databaseUrl: e.DATABASE_URL as string | undefined,
    dataDir: e.DATA_DIR,
    /** The keys that seal second-factor secrets and key the stored digests; null: the embedded database's own, in DATA_DIR (src/auth/secrets/sealing-keys.ts). */
    sealingKeys: sealingKeysOf(e.SEALING_KEYS, e.SEALING_KEYS_FILE, e.DATABASE_URL as string | undefined),
    db: {
      poolMax: e.DB_POOL_MAX,
      acquireTimeoutMs: e.DB_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
      preparedStatements: e.DB_PREPARED_STATEMENTS,
    },
    logLevel: e.LOG_LEVEL,
    validateResponses: e.VALIDATE_RESPONSES ?? e.NODE_ENV !== 'production',
    trustProxy: e.TRUST_PROXY,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    sessions: {
      lifetimeS: e.SESSION_LIFETIME_S,
      idleTimeoutS: e.SESSION_IDLE_TIMEOUT_S,
      refreshGraceS: e.REFRESH_GRACE_S,
    },
    signInThrottle: {
      maxFailuresPerEmailAndIp: e.SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP,
      maxFailuresPerIp: e.SIGN_IN_MAX_FAILURES_PER_IP,
      accountSlowdownAfter: e.SIGN_IN_ACCOUNT_SLOWDOWN_AFTER,
      accountMaxDelayS: e.SIGN_IN_ACCOUNT_MAX_DELAY_S,
      windowS: e.SIGN_IN_THROTTLE_WINDOW_S,
    },
    sweep: {
      intervalS: e.SWEEP_INTERVAL_S,
      policy: {
        throttleWindowS: e.SIGN_IN_THROTTLE_WINDOW_S,
        sessionIdleTimeoutS: e.SESSION_IDLE_TIMEOUT_S,
        sessionRetentionS: e.SESSION_RETENTION_DAYS * 24 * 3600,
      },
      auditRetentionS: e.AUDIT_RETENTION_DAYS * 24 * 3600,
      retention: {
        eventRetentionS: e.EVENT_RETENTION_DAYS * 24 * 3600,
        deliveryRetentionS: e.WEBHOOK_DELIVERY_RETENTION_DAYS * 24 * 3600,
        messageRetentionS: e.MESSAGE_RETENTION_DAYS * 24 * 3600,
        signInAddressRetentionS: e.SIGN_IN_ADDRESS_RETENTION_DAYS * 24 * 3600,
      },
    },
    secondFactor: {
      /** Holders of the built-in admin role must enrol a second factor before anything else. */
      requiredForAdmins: e.ADMIN_SECOND_FACTOR === 'required',
    },
    passkeys,
    rateLimits: {
      apiKeyDefault: e.API_KEY_DEFAULT_RATE_LIMIT ?? null,
      user: e.USER_RATE_LIMIT,
      syncIntervalMs: e.RATE_LIMIT_SYNC_INTERVAL_MS,
      unsyncedFraction: e.RATE_LIMIT_UNSYNCED_FRACTION,
    },
    oidc: {
      redirectUri: e.OIDC_REDIRECT_URI,
      flowTtlS: e.OIDC_FLOW_TTL_S,
      maxFlowsPerIp: e.OIDC_MAX_FLOWS_PER_IP,
      /** Where identity providers may be called (src/auth/identity-providers/provider-network.ts): OIDC_ALLOW_INSECURE_ISSUERS. */
      issuers: { allowInsecure: e.OIDC_ALLOW_INSECURE_ISSUERS },
    },
    leakReportKeysFile: e.LEAK_REPORT_KEYS_FILE,
    /** Keys verified from memory (src/api-keys/key-cache.ts); started by src/main.ts on PostgreSQL only. */
    apiKeyCache: { size: e.API_KEY_CACHE_SIZE, reconnectMs: e.API_KEY_CACHE_RECONNECT_MS },
    testClockFile: e.TEST_CLOCK_FILE,
    bootstrapAdminEmail: e.BOOTSTRAP_ADMIN_EMAIL,
    mail,
    passwordResets: {
      ttlMinutes: e.PASSWORD_RESET_TTL_MINUTES,
      maxPerAddress: e.PASSWORD_RESET_MAX_PER_ADDRESS,
      maxPerIp: e.PASSWORD_RESET_MAX_PER_IP,
    },
    webhooks: {
      allowPrivate: e.WEBHOOKS_ALLOW_PRIVATE_URLS,
      timeoutMs: e.WEBHOOKS_TIMEOUT_MS,
      retryScheduleS: retrySchedule,
      disableAfterDays: e.WEBHOOKS_DISABLE_AFTER_DAYS,
      pollIntervalMs: e.WEBHOOKS_POLL_INTERVAL_MS,
      concurrency: e.WEBHOOKS_CONCURRENCY,
      deliver: e.WEBHOOKS_DELIVER,
    },
  };
}

export type Config = ReturnType<typeof loadConfig>;

/**
 * The relying party of passkeys (docs/AUTH.md#passkeys): its id must be the host of every origin
 * or a parent domain of it (what browsers require), and an origin is exactly scheme://host[:port].
 */
function passkeyConfig(rpId: string, rpName: string, originList: string) {
  const bad = (why: string) => new ConfigError(`Invalid configuration:\n  ${why}`);
  if (!/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(rpId)) throw bad('PASSKEY_RP_ID: expected a lower-case host name, such as backoffice.example.com');
  const origins = originList.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  if (origins.length === 0) throw bad('PASSKEY_ORIGINS: expected at least one origin, such as https://backoffice.example.com');
  for (const origin of origins) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw bad(`PASSKEY_ORIGINS: ${origin} is not an origin (scheme://host[:port])`);
    }
    if (url.origin !== origin || !['https:', 'http:'].includes(url.protocol)) throw bad(`PASSKEY_ORIGINS: ${origin} is not an origin (scheme://host[:port], no path or trailing slash)`);
    if (url.hostname !== rpId && !url.hostname.endsWith(`.${rpId}`)) throw bad(`PASSKEY_ORIGINS: ${origin} is not on PASSKEY_RP_ID ${rpId} or a subdomain of it`);
  }
  return { rpId, rpName, origins };
}

/**
 * Mail (docs/MAIL.md): SMTP_URL checked now (a malformed one refuses to start; the server itself is
 * not reached: an unreachable one only delays messages). Without it, the development mailbox
 * outside production; production refuses to start without SMTP_URL unless MAIL_OUTBOX_ONLY says
 * that nothing here sends, and refuses the development mailbox (it shows every link to administrators).
 */
function mailConfig(e: { NODE_ENV: string; SMTP_URL: string; MAIL_FROM: string; MAIL_DEV_MAILBOX: string; MAIL_OUTBOX_ONLY: boolean; MAIL_SEND: boolean; MAIL_POLL_INTERVAL_MS: number; MAIL_BATCH: number; MAIL_TIMEOUT_MS: number }) {
  const bad = (why: string) => new ConfigError(`Invalid configuration:\n  ${why}`);
  const smtp = e.SMTP_URL === '' ? null : parseSmtpUrl(e.SMTP_URL);
  if (typeof smtp === 'string') throw bad(`SMTP_URL: ${smtp}`);
  const production = e.NODE_ENV === 'production';
  if (e.MAIL_DEV_MAILBOX === 'on' && production) throw bad('MAIL_DEV_MAILBOX: not with NODE_ENV=production (it shows every message, links included, to administrators)');
  if (e.MAIL_DEV_MAILBOX === 'on' && smtp) throw bad('MAIL_DEV_MAILBOX: not with SMTP_URL (messages go to one place)');
  if (production && !smtp && !e.MAIL_OUTBOX_ONLY) throw bad('SMTP_URL: required with NODE_ENV=production (or MAIL_OUTBOX_ONLY=true: messages are kept in the outbox and nothing sends them)');
  if (e.MAIL_OUTBOX_ONLY && smtp) throw bad('MAIL_OUTBOX_ONLY: not with SMTP_URL');
  if (!/^[^\r\n]*@[^\r\n]+$/.test(e.MAIL_FROM)) throw bad('MAIL_FROM: expected an address, such as Back office <no-reply@example.com>');
  if (!Number.isInteger(e.MAIL_BATCH) || e.MAIL_BATCH < 1 || e.MAIL_BATCH > 1000) throw bad('MAIL_BATCH: expected 1 to 1000 messages');
  if (!(e.MAIL_POLL_INTERVAL_MS >= 10 && e.MAIL_POLL_INTERVAL_MS <= 3_600_000)) throw bad('MAIL_POLL_INTERVAL_MS: expected 10 to 3600000 ms');
  if (!(e.MAIL_TIMEOUT_MS >= 100 && e.MAIL_TIMEOUT_MS <= 600_000)) throw bad('MAIL_TIMEOUT_MS: expected 100 to 600000 ms');
  const devMailbox = e.MAIL_DEV_MAILBOX === 'on' || (e.MAIL_DEV_MAILBOX === '' && !smtp && !production && !e.MAIL_OUTBOX_ONLY);
  return {
    /** The SMTP server, or null (the development mailbox, or nothing sends). */
    smtp,
    devMailbox,
    /** Whether this process runs the sender (of SMTP, or the development mailbox's marking). */
    send: e.MAIL_SEND && (smtp !== null || devMailbox),
    from: e.MAIL_FROM,
    pollIntervalMs: e.MAIL_POLL_INTERVAL_MS,
    batch: e.MAIL_BATCH,
    timeoutMs: e.MAIL_TIMEOUT_MS,
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}
