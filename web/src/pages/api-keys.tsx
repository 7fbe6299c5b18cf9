// API keys: create (name, expiration, permissions from the creator's own), the secret shown once,
// the list with last use, expiry state and creator, a mark on keys worth less than declared (their
// creator lost rights or is disabled), revoke with confirmation, rotate with an optional grace
// period (shown disabled, with why, for a key holding permissions the person lacks). A key's own
// page (#/api-keys/<id>) shows its rate limit, its allowlist, its remaining uses and their refill,
// its metadata and its use per hour over 7 days.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, callTagged, ifMatch, type Tagged } from '../api/client.js';
import { TaggedEditor, unlessStale, type EditOutcome } from '../tagged-editor.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit, type Loaded } from '../load.js';
import { PermissionPicker } from '../permission-picker.js';
import { ErrorMessage, Field, ListState, Loading, Notice, PageTitle, SecretOnce, Why, lockedFor, useRevealed, TableScroll } from '../ui.js';
import { lacking } from '../authority.js';
import { href } from '../router.js';
import { HourlyChart, totalOf, type HourlySeries } from '../hourly-chart.js';

type ApiKey = components['schemas']['ApiKey'];
type Permission = components['schemas']['Permission'];

/** Keys should be renewed at intervals (the seed): we suggest 90 days. */
export const SUGGESTED_LIFETIME_DAYS = 90;
const DAY_MS = 86_400_000;

function dateInput(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The form's rate limit, allowlist, uses and metadata, as typed. */
interface LimitsInput {
  requests: string;
  seconds: string;
  ips: string;
  /** Remaining uses; empty: not usage-limited. */
  uses: string;
  refillInterval: '' | 'daily' | 'monthly';
  refillAmount: string;
  /** A JSON object as text; empty: none. */
  metadata: string;
}
const NO_LIMITS: LimitsInput = { requests: '', seconds: '', ips: '', uses: '', refillInterval: '', refillAmount: '', metadata: '' };
// The contract's bounds (openapi/components/schemas/RateLimit.yaml, AllowedIps.yaml), checked here
// first so a person reads what is wrong in their language; the API checks them again, and the
// entries' syntax and alignment (its answer is shown as it comes).
const MAX_REQUESTS = 1_000_000;
const MAX_SECONDS = 86_400;
const MAX_IPS = 100;
// ApiKey.yaml's remaining_uses and ApiKeyUsesRefill.yaml's amount; ApiKeyMetadata.yaml's size.
const MAX_USES = 1_000_000_000;
const MAX_METADATA_BYTES = 4096;

/** What the form shows of a key: its fields as the person would type them. */
function inputOf(key: ApiKey): LimitsInput {
  return {
    requests: key.rate_limit ? String(key.rate_limit.requests) : '',
    seconds: key.rate_limit ? String(key.rate_limit.per_seconds) : '',
    ips: key.allowed_ips?.join('\n') ?? '',
    uses: key.remaining_uses === null ? '' : String(key.remaining_uses),
    refillInterval: key.uses_refill?.interval ?? '',
    refillAmount: key.uses_refill ? String(key.uses_refill.amount) : '',
    metadata: key.metadata === null ? '' : JSON.stringify(key.metadata, null, 2),
  };
}

/** A mistake in the limit fields, in words for the person. */
class LimitsMistake extends Error {}

/** The body's `rate_limit` and `allowed_ips` (null: none), or a LimitsMistake. */
function limitsBody(input: LimitsInput, t: ReturnType<typeof useI18n>['t']) {
  const requests = input.requests.trim();
  const seconds = input.seconds.trim();
  if ((requests === '') !== (seconds === '')) throw new LimitsMistake(t('apiKeys.limitBoth'));
  const whole = (text: string, max: number) => /^\d+$/.test(text) && Number(text) >= 1 && Number(text) <= max;
  if (requests !== '' && !whole(requests, MAX_REQUESTS)) throw new LimitsMistake(t('apiKeys.requestsRange', { max: MAX_REQUESTS }));
  if (seconds !== '' && !whole(seconds, MAX_SECONDS)) throw new LimitsMistake(t('apiKeys.secondsRange', { max: MAX_SECONDS }));
  const ips = input.ips.split(/[\s,]+/).filter(Boolean);
  if (ips.length > MAX_IPS) throw new LimitsMistake(t('apiKeys.tooManyIps', { max: MAX_IPS }));
  const uses = input.uses.trim();
  if (uses !== '' && !(/^\d+$/.test(uses) && Number(uses) <= MAX_USES)) throw new LimitsMistake(t('apiKeys.usesRange', { max: MAX_USES }));
  const amount = input.refillAmount.trim();
  if (input.refillInterval !== '') {
    if (uses === '') throw new LimitsMistake(t('apiKeys.refillNeedsUses'));
    if (!(/^\d+$/.test(amount) && Number(amount) >= 1 && Number(amount) <= MAX_USES)) throw new LimitsMistake(t('apiKeys.refillAmountRange', { max: MAX_USES }));
  }
  let metadata: Record<string, unknown> | null = null;
  if (input.metadata.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.metadata);
    } catch {
      throw new LimitsMistake(t('apiKeys.metadataInvalid'));
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new LimitsMistake(t('apiKeys.metadataInvalid'));
    if (new TextEncoder().encode(JSON.stringify(parsed)).length > MAX_METADATA_BYTES) throw new LimitsMistake(t('apiKeys.metadataTooLarge', { max: MAX_METADATA_BYTES }));
    metadata = parsed as Record<string, unknown>;
  }
  return {
    rate_limit: requests === '' ? null : { requests: Number(requests), per_seconds: Number(seconds) },
    allowed_ips: ips.length === 0 ? null : ips,
    remaining_uses: uses === '' ? null : Number(uses),
    uses_refill: input.refillInterval === '' ? null : { interval: input.refillInterval, amount: Number(amount) },
    metadata,
  };
}

function LimitFields({ value, onChange, idPrefix }: { value: LimitsInput; onChange: (next: LimitsInput) => void; idPrefix: string }) {
  const { t } = useI18n();
  const set = (field: keyof LimitsInput) => (e: InputEvent) => onChange({ ...value, [field]: (e.currentTarget as HTMLInputElement).value });
  return (
    <fieldset>
      <legend>{t('apiKeys.rateLimit')}</legend>
      <Field label={t('apiKeys.limitRequests')} id={`${idPrefix}-requests`} inputMode="numeric" value={value.requests} onInput={set('requests')} />
      <Field label={t('apiKeys.limitSeconds')} id={`${idPrefix}-seconds`} inputMode="numeric" value={value.seconds} hint={t('apiKeys.limitHint')} onInput={set('seconds')} />
      <div class="field">
        <label for={`${idPrefix}-ips`}>{t('apiKeys.allowedIps')}</label>
        <textarea id={`${idPrefix}-ips`} aria-describedby={`${idPrefix}-ips-hint`} rows={3} value={value.ips} onInput={set('ips')} />
        <small id={`${idPrefix}-ips-hint`} class="hint">
          {t('apiKeys.allowedIpsHint', { max: MAX_IPS })}
        </small>
      </div>
      <Field label={t('apiKeys.remainingUses')} id={`${idPrefix}-uses`} inputMode="numeric" value={value.uses} hint={t('apiKeys.remainingUsesHint')} onInput={set('uses')} />
      <div class="field">
        <label for={`${idPrefix}-refill`}>{t('apiKeys.refill')}</label>
        <select id={`${idPrefix}-refill`} value={value.refillInterval} onChange={(e) => onChange({ ...value, refillInterval: (e.currentTarget as HTMLSelectElement).value as LimitsInput['refillInterval'] })}>
          <option value="">{t('apiKeys.refill.none')}</option>
          <option value="daily">{t('apiKeys.refill.daily')}</option>
          <option value="monthly">{t('apiKeys.refill.monthly')}</option>
        </select>
      </div>
      {value.refillInterval !== '' && (
        <Field label={t('apiKeys.refillAmount')} id={`${idPrefix}-refill-amount`} inputMode="numeric" value={value.refillAmount} onInput={set('refillAmount')} />
      )}
      <div class="field">
        <label for={`${idPrefix}-metadata`}>{t('apiKeys.metadata')}</label>
        <textarea id={`${idPrefix}-metadata`} aria-describedby={`${idPrefix}-metadata-hint`} rows={4} spellcheck={false} value={value.metadata} onInput={set('metadata')} />
        <small id={`${idPrefix}-metadata-hint`} class="hint">
          {t('apiKeys.metadataHint', { max: MAX_METADATA_BYTES })}
        </small>
      </div>
    </fieldset>
  );
}

/** A LimitsMistake in words, or the API's refusal. */
function LimitsError({ error }: { error: unknown }) {
  if (error instanceof LimitsMistake) {
    return (
      <div class="message error" role="alert">
        {error.message}
      </div>
    );
  }
  return <ErrorMessage error={error} />;
}

export function ApiKeysPage({ myPermissions, keyId }: { myPermissions: readonly Permission[]; keyId?: string }) {
  return keyId ? <ApiKeyPage id={keyId} /> : <ApiKeyList myPermissions={myPermissions} />;
}

type UsageOutcome = 'allowed' | 'rate_limited' | 'ip_refused' | 'permission_refused';
const USAGE_SERIES: HourlySeries<UsageOutcome>[] = [
  { key: 'allowed', label: 'apiKeys.usage.allowed', colour: '#2e7d32' },
  { key: 'rate_limited', label: 'apiKeys.usage.rateLimited', colour: '#e0a000' },
  { key: 'ip_refused', label: 'apiKeys.usage.ipRefused', colour: '#c62828' },
  { key: 'permission_refused', label: 'apiKeys.usage.permissionRefused', colour: '#6a1b9a' },
];

/** One key: what limits it, and its use per hour over the last 7 days (GET /api-keys/{id}/usage). */
function ApiKeyPage({ id }: { id: string }) {
  const usage = useLoad(() => call(() => api.GET('/api-keys/{id}/usage', { params: { path: { id } } })), [id]);
  // With its ETag: a change of limits is sent with If-Match, so it never overwrites someone else's.
  return (
    <TaggedEditor load={() => callTagged(() => api.GET('/api-keys/{id}', { params: { path: { id } } }))} deps={[id]}>
      {(key, done) => <ApiKeyDetails apiKey={key} usage={usage} done={done} />}
    </TaggedEditor>
  );
}

function ApiKeyDetails({ apiKey: { data: key, etag }, usage, done }: { apiKey: Tagged<ApiKey>; usage: Loaded<components['schemas']['ApiKeyUsage']>; done: (outcome?: EditOutcome) => void }) {
  const { t, language } = useI18n();
  const formatNumber = (n: number) => new Intl.NumberFormat(language).format(n);
  const { rate_limit: limit, allowed_ips: ips } = key;
  const hours = usage.data?.data;
  return (
    <>
      <PageTitle>{key.name}</PageTitle>
      <p>
        <a href={href('api-keys')}>{t('apiKeys.backToList')}</a>
      </p>
      <dl class="panel">
        <dt>{t('apiKeys.rateLimit')}</dt>
        <dd>{limit ? t('apiKeys.rateLimitValue', { requests: limit.requests, seconds: limit.per_seconds }) : t('apiKeys.rateLimitNone')}</dd>
        <dt>{t('apiKeys.allowedIps')}</dt>
        <dd>{ips ? ips.join(', ') : t('apiKeys.allowedIpsAny')}</dd>
        <dt>{t('apiKeys.remainingUses')}</dt>
        <dd>
          {key.remaining_uses === null
            ? t('apiKeys.usesNone')
            : key.uses_refill
              ? t('apiKeys.usesRefilled', { remaining: formatNumber(key.remaining_uses), amount: formatNumber(key.uses_refill.amount), interval: t(`apiKeys.refill.${key.uses_refill.interval}`) })
              : t('apiKeys.usesLeft', { remaining: formatNumber(key.remaining_uses) })}
        </dd>
        <dt>{t('apiKeys.metadata')}</dt>
        <dd>{key.metadata === null ? t('apiKeys.metadataNone') : <pre class="metadata">{JSON.stringify(key.metadata, null, 2)}</pre>}</dd>
      </dl>
      {!key.revoked_at && <EditLimitsForm apiKey={key} etag={etag} done={done} />}
      {usage.error ? (
        <ErrorMessage error={usage.error} onRetry={usage.reload} />
      ) : !hours ? (
        <Loading />
      ) : (
        <HourlyChart
          id="usage"
          title={t('apiKeys.usage.title')}
          summary={t('apiKeys.usage.summary', {
            allowed: totalOf(hours, 'allowed'),
            rateLimited: totalOf(hours, 'rate_limited'),
            ipRefused: totalOf(hours, 'ip_refused'),
            permissionRefused: totalOf(hours, 'permission_refused'),
          })}
          empty={t('apiKeys.usage.empty')}
          table={t('apiKeys.usage.table')}
          series={USAGE_SERIES}
          hours={hours}
        />
      )}
    </>
  );
}

/**
 * Changes a key's rate limit, allowlist, uses and metadata (PATCH /api-keys/{id}): empty fields
 * remove them. The uses and metadata are sent only when the person changed them: the count goes
 * down with every request while the page is open, and sending the count it was loaded with would
 * give the key back the uses it spent since (and ask for the rights that needs).
 */
function EditLimitsForm({ apiKey, etag, done }: { apiKey: ApiKey; etag: string; done: (outcome?: EditOutcome) => void }) {
  const { t } = useI18n();
  const loaded = inputOf(apiKey);
  const [limits, setLimits] = useState<LimitsInput>(loaded);
  const { busy, error, submit } = useSubmit(async () => {
    done();
    const { rate_limit, allowed_ips, remaining_uses, uses_refill, metadata } = limitsBody(limits, t);
    const body = {
      rate_limit,
      allowed_ips,
      ...(limits.uses.trim() !== loaded.uses && { remaining_uses }),
      ...((limits.refillInterval !== loaded.refillInterval || limits.refillAmount.trim() !== loaded.refillAmount) && { uses_refill }),
      ...(limits.metadata !== loaded.metadata && { metadata }),
    };
    await unlessStale(async () => {
      await call(() => api.PATCH('/api-keys/{id}', { params: { path: { id: apiKey.id }, header: ifMatch(etag) }, body }));
      done('saved');
    }, done);
  });
  return (
    <form onSubmit={submit} aria-labelledby="limits-title" class="panel">
      <h2 id="limits-title">{t('apiKeys.limitsTitle')}</h2>
      <LimitFields value={limits} onChange={setLimits} idPrefix="edit-limit" />
      <LimitsError error={error} />
      <button type="submit" disabled={busy}>
        {busy ? t('common.saving') : t('apiKeys.limitsSave')}
      </button>
    </form>
  );
}

function ApiKeyList({ myPermissions }: { myPermissions: readonly Permission[] }) {
  const { t } = useI18n();
  const keys = useLoad(() => call(() => api.GET('/api-keys')), []);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);

  const revoke = async (key: ApiKey) => {
    if (!window.confirm(t('apiKeys.revokeConfirm', { name: key.name }))) return;
    setActionError(null);
    try {
      await call(() => api.DELETE('/api-keys/{id}', { params: { path: { id: key.id } } }));
      keys.reload();
    } catch (err) {
      setActionError(err);
    }
  };
  const [rotating, setRotating] = useState<ApiKey | null>(null);

  return (
    <>
      <PageTitle>{t('apiKeys.title')}</PageTitle>
      {secret && <SecretOnce id="api-key-secret" title={t('apiKeys.secretTitle', { name: secret.name })} once={t('apiKeys.secretOnce')} done={t('apiKeys.secretDone')} secret={secret.secret} onDone={() => setSecret(null)} />}
      {rotating && (
        <RotateKeyForm
          key={rotating.id}
          apiKey={rotating}
          onCancel={() => setRotating(null)}
          onRotated={(rotated) => {
            setRotating(null);
            setSecret(rotated);
            keys.reload();
          }}
        />
      )}
      <CreateKeyForm
        myPermissions={myPermissions}
        onCreated={(created) => {
          setSecret(created);
          keys.reload();
        }}
      />
      <h2>{t('apiKeys.listTitle')}</h2>
      <ErrorMessage error={actionError} />
      <ListState loaded={keys} empty={t('apiKeys.empty')}>
        {(items) => (
          <KeyTable keys={items} myPermissions={myPermissions} onRevoke={revoke} onRotate={setRotating} />
        )}
      </ListState>
    </>
  );
}

/**
 * The secret of a create or rotate answer. Only the replay of an Idempotency-Key has none (it is
 * never stored), and the back office sends no key on these two, so a missing one is a bug.
 */
function secretOf(answer: { secret: string | null }): string {
  if (answer.secret === null) throw new Error('The answer carries no secret.');
  return answer.secret;
}

function CreateKeyForm({ myPermissions, onCreated }: { myPermissions: readonly Permission[]; onCreated: (created: { name: string; secret: string }) => void }) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const [expires, setExpires] = useState(dateInput(new Date(Date.now() + SUGGESTED_LIFETIME_DAYS * DAY_MS)));
  const [permissions, setPermissions] = useState<string[]>([]);
  const [limits, setLimits] = useState<LimitsInput>(NO_LIMITS);

  const { busy, error, submit } = useSubmit(async () => {
    const { rate_limit, allowed_ips, remaining_uses, uses_refill, metadata } = limitsBody(limits, t);
    // The key expires at the end of the chosen day, UTC.
    const body = {
      name,
      permissions: permissions as Permission[],
      ...(expires ? { expires_at: `${expires}T23:59:59Z` } : {}),
      ...(rate_limit && { rate_limit }),
      ...(allowed_ips && { allowed_ips }),
      ...(remaining_uses !== null && { remaining_uses }),
      ...(uses_refill && { uses_refill }),
      ...(metadata && { metadata }),
    };
    const created = await call(() => api.POST('/api-keys', { body }));
    onCreated({ name: created.api_key.name, secret: secretOf(created) });
    setName('');
    setPermissions([]);
    setLimits(NO_LIMITS);
  });

  return (
    <form onSubmit={submit} aria-labelledby="create-key-title" class="panel">
      <h2 id="create-key-title">{t('apiKeys.createTitle')}</h2>
      <Field label={t('apiKeys.name')} id="key-name" required maxLength={100} value={name} onInput={(e: InputEvent) => setName((e.currentTarget as HTMLInputElement).value)} />
      <Field
        label={t('apiKeys.expires')}
        id="key-expires"
        type="date"
        min={dateInput(new Date(Date.now() + DAY_MS))}
        value={expires}
        hint={t('apiKeys.expiresHint', { days: SUGGESTED_LIFETIME_DAYS })}
        onInput={(e: InputEvent) => setExpires((e.currentTarget as HTMLInputElement).value)}
      />
      {!expires && <Notice tone="warning">{t('apiKeys.noExpiryWarning')}</Notice>}
      <PermissionPicker legend={t('apiKeys.permissions')} idPrefix="key-permission" available={myPermissions} value={permissions} onChange={setPermissions} />
      <LimitFields value={limits} onChange={setLimits} idPrefix="key-limit" />
      <LimitsError error={error} />
      <button type="submit" disabled={busy || permissions.length === 0}>
        {busy ? t('common.saving') : t('apiKeys.create')}
      </button>
    </form>
  );
}

/** How long the old secret may keep working after a rotation: the API allows up to 24 hours. */
const GRACE_PERIODS_S = [0, 3600, 86_400] as const;

/** Rotation: a new secret now, the old one stopping at once or after a grace period for the switch-over. */
function RotateKeyForm({ apiKey, onRotated, onCancel }: { apiKey: ApiKey; onRotated: (rotated: { name: string; secret: string }) => void; onCancel: () => void }) {
  const { t } = useI18n();
  const [grace, setGrace] = useState<number>(0);
  // Opened from the list below: brought to the screen (the person clicked far under it).
  const ref = useRevealed<HTMLFormElement>(apiKey.id);
  const { busy, error, submit } = useSubmit(async () => {
    const rotated = await call(() => api.POST('/api-keys/{id}/rotate', { params: { path: { id: apiKey.id } }, body: { grace_period_seconds: grace } }));
    onRotated({ name: rotated.api_key.name, secret: secretOf(rotated) });
  });
  return (
    <form onSubmit={submit} aria-labelledby="rotate-key-title" class="panel once" tabIndex={-1} ref={ref}>
      <h2 id="rotate-key-title">{t('apiKeys.rotateTitle', { name: apiKey.name })}</h2>
      <div class="field">
        <label for="rotate-grace">{t('apiKeys.grace')}</label>
        <select id="rotate-grace" value={String(grace)} onChange={(e) => setGrace(Number((e.currentTarget as HTMLSelectElement).value))}>
          {GRACE_PERIODS_S.map((seconds) => (
            <option key={seconds} value={String(seconds)}>
              {t(`apiKeys.grace.${seconds}`)}
            </option>
          ))}
        </select>
      </div>
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? t('common.saving') : t('apiKeys.rotateSubmit')}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

function KeyTable({ keys, myPermissions, onRevoke, onRotate }: { keys: ApiKey[]; myPermissions: readonly Permission[]; onRevoke: (key: ApiKey) => void; onRotate: (key: ApiKey) => void }) {
  const { t, formatDate } = useI18n();
  return (
    <TableScroll>
      <table>
        <thead>
          <tr>
            <th scope="col">{t('apiKeys.name')}</th>
            <th scope="col">{t('apiKeys.key')}</th>
            <th scope="col">{t('apiKeys.permissions')}</th>
            <th scope="col">{t('apiKeys.createdBy')}</th>
            <th scope="col">{t('apiKeys.expiry')}</th>
            <th scope="col">{t('apiKeys.lastUsed')}</th>
            <th scope="col">
              <span class="visually-hidden">{t('common.actions')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => {
            // Rotating hands the secret to the person: they must hold every permission of the key.
            const rotateLocked = lockedFor(t, `rotate-why-${key.id}`, lacking(myPermissions, key.permissions));
            return (
              <tr key={key.id}>
                <td>
                  <a href={href('api-keys', key.id)}>{key.name}</a>
                </td>
                <td>
                  <code>
                    {key.display_prefix}…{key.last_characters}
                  </code>
                </td>
                <td>
                  {key.permissions.join(', ')} <EffectiveState apiKey={key} />
                </td>
                <td>{key.creator ? key.creator.email : t('apiKeys.byOperator')}</td>
                <td>
                  <ExpiryState apiKey={key} />
                </td>
                <td>{key.last_used_at ? `${formatDate(key.last_used_at)}${key.last_used_ip ? ` (${key.last_used_ip})` : ''}` : t('common.never')}</td>
                <td class="actions">
                  {!key.revoked_at && (
                    <>
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => onRotate(key)}
                        disabled={rotateLocked !== undefined}
                        title={rotateLocked?.title}
                        aria-label={t('apiKeys.rotateNamed', { name: key.name })}
                        aria-describedby={rotateLocked?.describedBy}
                      >
                        {t('apiKeys.rotate')}
                      </button>
                      <button type="button" class="danger" onClick={() => onRevoke(key)} aria-label={t('apiKeys.revokeNamed', { name: key.name })}>
                        {t('apiKeys.revoke')}
                      </button>
                      <Why locked={rotateLocked} />
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** Marks a key that is worth less than declared: its creator lost some of its permissions, or is disabled. */
function EffectiveState({ apiKey }: { apiKey: ApiKey }) {
  const { t } = useI18n();
  if (apiKey.revoked_at) return null;
  if (apiKey.creator?.status === 'disabled') return <span class="badge bad">{t('apiKeys.creatorDisabled')}</span>;
  if (apiKey.effective_permissions.length === apiKey.permissions.length) return null;
  return <span class="badge warn">{t('apiKeys.narrowed', { permissions: apiKey.effective_permissions.join(', ') || t('common.none') })}</span>;
}

function ExpiryState({ apiKey }: { apiKey: ApiKey }) {
  const { t, formatDate } = useI18n();
  if (apiKey.revoked_at) return <span class="badge bad">{t('apiKeys.revoked')}</span>;
  if (!apiKey.expires_at) return <span class="badge warn">{t('apiKeys.neverExpires')}</span>;
  const left = new Date(apiKey.expires_at).getTime() - Date.now();
  if (left <= 0) return <span class="badge bad">{t('apiKeys.expired')}</span>;
  const days = Math.floor(left / DAY_MS);
  return (
    <span class={`badge ${days <= 14 ? 'warn' : 'ok'}`} title={formatDate(apiKey.expires_at)}>
      {days === 0 ? t('apiKeys.expiresToday') : t('apiKeys.expiresIn', { days })}
    </span>
  );
}

/** The page as the navigation opens it (its entry: api-keys.entry.ts). */
export const Route = ({ id, me }: PageProps) => <ApiKeysPage myPermissions={me.permissions} keyId={id} />;
