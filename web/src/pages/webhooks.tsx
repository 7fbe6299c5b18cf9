// Webhooks (docs/EVENTS.md): the endpoints, a new one (the signing secret shown once,
// with Copy, as API keys are), one opened to change its event types, enable or disable it,
// rotate its secret, send a test event, delete it, and see its recent deliveries and replay one.
// The event-type picker offers only the types the person may read (subscribing to another is
// refused by the API). The opened endpoint is read on its own with its ETag, sent back as If-Match.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, callTagged, changedMeanwhile, ifMatch } from '../api/client.js';
import type { components } from '../../../generated/openapi.js';
import { EventType as EventTypes } from 'virtual:contract-enums';
import { useI18n, type MessageKey } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { href, navigate } from '../router.js';
import { ErrorMessage, Field, ListState, Loading, Notice, PageTitle, SecretOnce, TableScroll } from '../ui.js';

type Endpoint = components['schemas']['WebhookEndpoint'];
type EventType = components['schemas']['EventType'];
type Permission = components['schemas']['Permission'];
type Delivery = components['schemas']['WebhookDelivery'];

/** The resource of an event type (`task` of `task.created`). */
type EventResource = EventType extends `${infer R}.${string}` ? R : never;
/**
 * The permission reading each resource's events needs (docs/EVENTS.md): typed against the
 * contract, so an event type of a new resource fails the type check until it is given one.
 */
const READ_PERMISSION: Record<EventResource, Permission> = { task: 'tasks.read', meeting: 'meetings.read', user: 'users.read', api_key: 'api_keys.manage' };
/** Every event type of the contract (web/vite.config.ts) and the permission reading it needs. */
const EVENT_TYPES: { type: EventType; needs: Permission }[] = EventTypes.map((type) => ({ type, needs: READ_PERMISSION[type.split('.')[0] as EventResource] }));

export function WebhooksPage({ endpointId, myPermissions }: { endpointId?: string | undefined; myPermissions: readonly Permission[] }) {
  const { t } = useI18n();
  const endpoints = useLoad(() => call(() => api.GET('/webhook-endpoints')), []);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const readable = EVENT_TYPES.filter((e) => myPermissions.includes(e.needs)).map((e) => e.type);
  const done = () => (endpoints.reload(), navigate('webhooks'));

  return (
    <>
      <PageTitle>{t('webhooks.title')}</PageTitle>
      <p>{t('webhooks.intro')}</p>
      {secret && <SecretOnce id="webhook-secret" title={t('webhooks.secretTitle', { url: secret.url })} once={t('webhooks.secretOnce')} done={t('webhooks.secretDone')} secret={secret.secret} onDone={() => setSecret(null)} />}
      <div class="toolbar">
        <a href={href('webhooks', 'new')}>{t('webhooks.new')}</a>
      </div>
      {endpointId === 'new' && (
        <CreateForm
          readable={readable}
          onCreated={(made) => {
            setSecret(made);
            done();
          }}
        />
      )}
      {endpointId && endpointId !== 'new' && <EndpointPanel key={endpointId} id={endpointId} readable={readable} onSecret={setSecret} onChanged={endpoints.reload} onDeleted={done} />}
      <ListState loaded={endpoints} empty={t('webhooks.empty')}>
        {(items) => (
          <TableScroll>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('webhooks.url')}</th>
                  <th scope="col">{t('webhooks.eventTypes')}</th>
                  <th scope="col">{t('webhooks.state')}</th>
                  <th scope="col">{t('webhooks.owner')}</th>
                  <th scope="col">
                    <span class="visually-hidden">{t('common.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((e) => (
                  <tr key={e.id}>
                    <td>{e.url}</td>
                    <td>{e.event_types.join(', ')}</td>
                    <td>{stateOf(t, e)}</td>
                    <td>{e.created_by.label}</td>
                    <td>
                      <a href={href('webhooks', e.id)} aria-label={t('webhooks.editNamed', { url: e.url })}>
                        {t('common.edit')}
                      </a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </ListState>
    </>
  );
}

const stateOf = (t: (key: MessageKey) => string, e: Endpoint) => (e.enabled ? t('webhooks.on') : e.disabled_reason === 'failing' ? t('webhooks.failing') : t('webhooks.off'));

/** Checkboxes of the types the person may read (and those already subscribed, so none is dropped unseen). */
function TypePicker({ readable, chosen, onChange }: { readable: EventType[]; chosen: EventType[]; onChange: (types: EventType[]) => void }) {
  const { t } = useI18n();
  const offered = EVENT_TYPES.map((e) => e.type).filter((type) => readable.includes(type) || chosen.includes(type));
  return (
    <fieldset class="field">
      <legend>{t('webhooks.eventTypes')}</legend>
      {offered.map((type) => (
        <label key={type}>
          <input
            type="checkbox"
            checked={chosen.includes(type)}
            onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked ? [...chosen, type] : chosen.filter((c) => c !== type))}
          />{' '}
          {type}
        </label>
      ))}
    </fieldset>
  );
}

function CreateForm({ readable, onCreated }: { readable: EventType[]; onCreated: (made: { url: string; secret: string }) => void }) {
  const { t } = useI18n();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<EventType[]>([]);
  const { busy, error, submit } = useSubmit(async () => {
    const made = await call(() => api.POST('/webhook-endpoints', { body: { url, event_types: types, enabled: true, key_style: 'snake', ...(description ? { description } : {}) } }));
    if (made.secret === null) throw new Error('The answer carries no secret.');
    onCreated({ url: made.webhook_endpoint.url, secret: made.secret });
  });
  return (
    <form onSubmit={submit} class="panel" aria-labelledby="webhook-create-title">
      <h2 id="webhook-create-title">{t('webhooks.createTitle')}</h2>
      <Field label={t('webhooks.url')} id="webhook-url" type="url" required maxLength={2048} value={url} onInput={(e: InputEvent) => setUrl((e.currentTarget as HTMLInputElement).value)} />
      <Field label={t('webhooks.description')} id="webhook-description" maxLength={500} value={description} onInput={(e: InputEvent) => setDescription((e.currentTarget as HTMLInputElement).value)} />
      <TypePicker readable={readable} chosen={types} onChange={setTypes} />
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="submit" disabled={busy || types.length === 0}>
          {busy ? t('common.saving') : t('webhooks.create')}
        </button>
        <a href={href('webhooks')}>{t('common.cancel')}</a>
      </div>
    </form>
  );
}

/** One endpoint, read on its own (with its ETag): change, rotate, test, delete; its deliveries. */
function EndpointPanel({
  id,
  readable,
  onSecret,
  onChanged,
  onDeleted,
}: {
  id: string;
  readable: EventType[];
  onSecret: (made: { url: string; secret: string }) => void;
  onChanged: () => void;
  onDeleted: () => void;
}) {
  const read = useLoad(() => callTagged(() => api.GET('/webhook-endpoints/{id}', { params: { path: { id } } })), [id]);
  // Kept here: the form is made again from each new read (keyed by its tag), the notice must outlive it.
  const [stale, setStale] = useState(false);
  if (read.error) return <ErrorMessage error={read.error} onRetry={read.reload} />;
  if (!read.data) return <Loading />;
  return (
    <>
      <EditForm
        key={read.data.etag}
        endpoint={read.data.data}
        etag={read.data.etag}
        readable={readable}
        // Said with the form rebuilt from the endpoint as it now is, not before.
        stale={stale && !read.loading}
        onSaved={() => (setStale(false), read.reload(), onChanged())}
        onStale={() => (setStale(true), read.reload())}
        onSecret={(made) => (onSecret(made), read.reload(), onChanged())}
        onDeleted={onDeleted}
      />
      <Deliveries id={id} />
    </>
  );
}

function EditForm({
  endpoint,
  etag,
  readable,
  stale,
  onSaved,
  onStale,
  onSecret,
  onDeleted,
}: {
  endpoint: Endpoint;
  etag: string;
  readable: EventType[];
  stale: boolean;
  onSaved: () => void;
  onStale: () => void;
  onSecret: (made: { url: string; secret: string }) => void;
  onDeleted: () => void;
}) {
  const { t } = useI18n();
  const [description, setDescription] = useState(endpoint.description ?? '');
  const [types, setTypes] = useState<EventType[]>(endpoint.event_types);
  const [enabled, setEnabled] = useState(endpoint.enabled);
  const [note, setNote] = useState<MessageKey | null>(null);
  const path = { params: { path: { id: endpoint.id } } };
  const guarded = async (run: () => Promise<void>) => {
    try {
      await run();
    } catch (err) {
      if (!changedMeanwhile(err)) throw err;
      onStale();
    }
  };
  const save = useSubmit(() =>
    guarded(async () => {
      await call(() => api.PATCH('/webhook-endpoints/{id}', { ...path, headers: ifMatch(etag), body: { description: description || null, event_types: types, enabled } }));
      onSaved();
    }),
  );
  const removal = useSubmit(() =>
    guarded(async () => {
      if (!window.confirm(t('webhooks.deleteConfirm', { url: endpoint.url }))) return;
      await call(() => api.DELETE('/webhook-endpoints/{id}', { ...path, headers: ifMatch(etag) }));
      onDeleted();
    }),
  );
  const rotation = useSubmit(async () => {
    if (!window.confirm(t('webhooks.rotateConfirm'))) return;
    const rotated = await call(() => api.POST('/webhook-endpoints/{id}/rotate', { ...path, body: { grace_period_seconds: 86_400 } }));
    if (rotated.secret !== null) onSecret({ url: rotated.webhook_endpoint.url, secret: rotated.secret });
  });
  const test = useSubmit(async () => {
    await call(() => api.POST('/webhook-endpoints/{id}/test', path));
    setNote('webhooks.testSent');
  });
  return (
    <form onSubmit={save.submit} class="panel" aria-labelledby="webhook-edit-title">
      <h2 id="webhook-edit-title">{t('webhooks.editTitle', { url: endpoint.url })}</h2>
      {stale && <Notice tone="warning">{t('webhooks.changedMeanwhile')}</Notice>}
      {note && <Notice tone="success">{t(note)}</Notice>}
      {endpoint.disabled_reason === 'failing' && <Notice tone="warning">{t('webhooks.failing')}</Notice>}
      <Field label={t('webhooks.description')} id="webhook-edit-description" maxLength={500} value={description} onInput={(e: InputEvent) => setDescription((e.currentTarget as HTMLInputElement).value)} />
      <TypePicker readable={readable} chosen={types} onChange={setTypes} />
      <div class="field">
        <label>
          <input type="checkbox" id="webhook-enabled" checked={enabled} onChange={(e) => setEnabled((e.currentTarget as HTMLInputElement).checked)} /> {t('webhooks.enabled')}
        </label>
      </div>
      <ErrorMessage error={save.error ?? removal.error ?? rotation.error ?? test.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy || types.length === 0}>
          {save.busy ? t('common.saving') : t('common.save')}
        </button>
        <button type="button" class="secondary" disabled={rotation.busy} onClick={rotation.submit}>
          {t('webhooks.rotate')}
        </button>
        <button type="button" class="secondary" disabled={test.busy} onClick={test.submit}>
          {t('webhooks.sendTest')}
        </button>
        <button type="button" class="secondary" disabled={removal.busy} onClick={removal.submit}>
          {t('webhooks.delete')}
        </button>
        <a href={href('webhooks')}>{t('common.cancel')}</a>
      </div>
    </form>
  );
}

function Deliveries({ id }: { id: string }) {
  const { t, formatDate } = useI18n();
  const deliveries = useLoad(() => call(() => api.GET('/webhook-endpoints/{id}/deliveries', { params: { path: { id }, query: { limit: 20 } } })), [id]);
  const [replayed, setReplayed] = useState(false);
  const replay = async (d: Delivery) => {
    await call(() => api.POST('/webhook-endpoints/{id}/deliveries/{delivery_id}/replay', { params: { path: { id, delivery_id: d.id } } }));
    setReplayed(true);
    deliveries.reload();
  };
  return (
    <section aria-labelledby="webhook-deliveries-title" aria-busy={deliveries.loading}>
      <h2 id="webhook-deliveries-title">{t('webhooks.deliveries')}</h2>
      {replayed && <Notice tone="success">{t('webhooks.replayed')}</Notice>}
      <div class="toolbar">
        <button type="button" class="secondary" onClick={deliveries.reload}>
          {t('webhooks.refresh')}
        </button>
      </div>
      <ListState loaded={deliveries} empty={t('webhooks.noDeliveries')}>
        {(items) => (
          <TableScroll>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('webhooks.event')}</th>
                  <th scope="col">{t('webhooks.status')}</th>
                  <th scope="col">{t('webhooks.attempts')}</th>
                  <th scope="col">{t('webhooks.answer')}</th>
                  <th scope="col">{t('webhooks.at')}</th>
                  <th scope="col">
                    <span class="visually-hidden">{t('common.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((d) => (
                  <tr key={d.id}>
                    <td>{d.event_type}</td>
                    <td>{t(`webhooks.status.${d.status}` as MessageKey)}</td>
                    <td>{d.attempts}</td>
                    <td>{d.last_status_code ?? d.last_error ?? ''}</td>
                    <td>{formatDate(d.created_at)}</td>
                    <td>
                      <button type="button" class="secondary" aria-label={t('webhooks.replayNamed', { type: d.event_type })} onClick={() => void replay(d)}>
                        {t('webhooks.replay')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </ListState>
    </section>
  );
}

/** The page as the navigation opens it (its entry: webhooks.entry.ts). */
export const Route = ({ id, me }: PageProps) => <WebhooksPage endpointId={id} myPermissions={me.permissions} />;
