// Identity providers (docs/IDENTITY.md): the companies' OpenID Providers people sign in
// with. The list, a new one, change one, remove one. The client secret is write-only: typed when
// the provider is added, typed again only to replace it, never shown (the API answers
// client_secret_set only). Lists are typed as text (domains, scopes, amr/acr values separated by
// commas or spaces; one group mapping a line, "group: role, role"); the server judges them.
// The list is read a page at a time (cursor); a provider opened is read on its own with its ETag
// and changed through TaggedEditor (If-Match, a 412 shown and the form rebuilt), as every resource.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, callTagged, ifMatch } from '../api/client.js';
import { TaggedEditor, unlessStale, type EditOutcome } from '../tagged-editor.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { href, navigate } from '../router.js';
import { ErrorMessage, Field, ListState, PageTitle, Pager, useCursorPages, TableScroll } from '../ui.js';

type Provider = components['schemas']['IdentityProvider'];
type Mapping = components['schemas']['IdentityProviderRoleMapping'];

const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);
const mappingsText = (mappings: readonly Mapping[]) => mappings.map((m) => `${m.group}: ${m.roles.join(', ')}`).join('\n');
function parseMappings(text: string): Mapping[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.lastIndexOf(':');
      return at < 0 ? { group: line, roles: [] } : { group: line.slice(0, at).trim(), roles: line.slice(at + 1).split(',').map((r) => r.trim()).filter(Boolean) };
    });
}

export function IdentityProvidersPage({ providerId }: { providerId?: string | undefined }) {
  const { t } = useI18n();
  const pages = useCursorPages();
  const { cursor } = pages;
  const providers = useLoad(() => call(() => api.GET('/identity-providers', { params: { query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } } })), [cursor]);
  const created = () => (providers.reload(), navigate('identity-providers'));
  const gone = () => (pages.restart(), providers.reload(), navigate('identity-providers'));

  return (
    <>
      <PageTitle>{t('identityProviders.title')}</PageTitle>
      <p>{t('identityProviders.intro')}</p>
      <div class="toolbar">
        <a href={href('identity-providers', 'new')}>{t('identityProviders.new')}</a>
      </div>
      {providerId === 'new' && <ProviderForm key="new" provider={null} etag="" onSaved={created} onDone={() => undefined} onDeleted={gone} />}
      {providerId && providerId !== 'new' && (
        <TaggedEditor load={() => callTagged(() => api.GET('/identity-providers/{id}', { params: { path: { id: providerId } } }))} deps={[providerId]}>
          {(provider, done) => (
            <ProviderForm
              provider={provider.data}
              etag={provider.etag}
              onSaved={() => (providers.reload(), done('saved'))}
              onDone={(outcome) => (providers.reload(), done(outcome))}
              onDeleted={gone}
            />
          )}
        </TaggedEditor>
      )}
      <ListState loaded={providers} empty={t('identityProviders.empty')}>
        {(items) => (
          <TableScroll>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('identityProviders.name')}</th>
                  <th scope="col">{t('identityProviders.issuer')}</th>
                  <th scope="col">{t('identityProviders.domains')}</th>
                  <th scope="col">{t('identityProviders.ssoRequiredColumn')}</th>
                  <th scope="col">
                    <span class="visually-hidden">{t('common.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((p) => (
                  <tr key={p.id}>
                    <td>{p.name}</td>
                    <td>{p.issuer}</td>
                    <td>{p.domains.join(', ')}</td>
                    <td>{p.sso_required ? t('identityProviders.yes') : t('identityProviders.no')}</td>
                    <td>
                      <a href={href('identity-providers', p.id)} aria-label={t('identityProviders.editNamed', { name: p.name })}>
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
      <Pager label={t('identityProviders.pages')} previous={pages.previous} next={pages.next(providers.data?.next_cursor)} number={pages.number} loading={providers.loading} />
      {providers.data?.data[0] && <p class="hint">{t('identityProviders.redirectUri', { uri: providers.data.data[0].redirect_uri })}</p>}
    </>
  );
}

const PAGE_SIZE = 50;

/**
 * A new provider (`provider` null), or one read with its `etag`: a change or removal sends it as
 * If-Match, and a 412 ends as `stale` (TaggedEditor reads the provider again and says why).
 */
function ProviderForm({
  provider,
  etag,
  onSaved,
  onDone,
  onDeleted,
}: {
  provider: Provider | null;
  etag: string;
  onSaved: () => void;
  onDone: (outcome: EditOutcome) => void;
  onDeleted: () => void;
}) {
  const { t } = useI18n();
  const [name, setName] = useState(provider?.name ?? '');
  const [issuer, setIssuer] = useState(provider?.issuer ?? '');
  const [clientId, setClientId] = useState(provider?.client_id ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [domains, setDomains] = useState(provider?.domains.join(', ') ?? '');
  const [scopes, setScopes] = useState((provider?.scopes ?? ['openid', 'email', 'profile']).join(' '));
  const [groupsClaim, setGroupsClaim] = useState(provider?.groups_claim ?? 'groups');
  const [mappings, setMappings] = useState(mappingsText(provider?.role_mappings ?? []));
  const [createUnknown, setCreateUnknown] = useState(provider?.create_unknown_people ?? false);
  const [ssoRequired, setSsoRequired] = useState(provider?.sso_required ?? false);
  const [amr, setAmr] = useState(provider?.second_factor_amr.join(', ') ?? '');
  const [acr, setAcr] = useState(provider?.second_factor_acr.join(', ') ?? '');
  const text = (set: (v: string) => void) => (e: InputEvent) => set((e.currentTarget as HTMLInputElement).value);

  const { busy, error, submit } = useSubmit(() => unlessStale(async () => {
    const fields = {
      name,
      issuer,
      client_id: clientId,
      domains: words(domains),
      scopes: words(scopes),
      groups_claim: groupsClaim,
      role_mappings: parseMappings(mappings),
      create_unknown_people: createUnknown,
      sso_required: ssoRequired,
      second_factor_amr: words(amr),
      second_factor_acr: words(acr),
    };
    if (provider) {
      // The secret is sent only to replace it: left empty, the saved one stays.
      await call(() =>
        api.PATCH('/identity-providers/{id}', { params: { path: { id: provider.id }, header: ifMatch(etag) }, body: { ...fields, ...(clientSecret ? { client_secret: clientSecret } : {}) } }),
      );
    } else {
      await call(() => api.POST('/identity-providers', { body: { ...fields, client_secret: clientSecret } }));
    }
    onSaved();
  }, onDone));
  const removal = useSubmit(() => unlessStale(async () => {
    if (!provider || !window.confirm(t('identityProviders.deleteConfirm', { name: provider.name }))) return;
    await call(() => api.DELETE('/identity-providers/{id}', { params: { path: { id: provider.id }, header: ifMatch(etag) } }));
    onDeleted();
  }, onDone));

  return (
    <form onSubmit={submit} class="panel" aria-labelledby="provider-form-title">
      <h2 id="provider-form-title">{provider ? t('identityProviders.editTitle', { name: provider.name }) : t('identityProviders.createTitle')}</h2>
      <Field label={t('identityProviders.name')} id="provider-name" required maxLength={64} value={name} onInput={text(setName)} hint={t('identityProviders.nameHint')} />
      <Field label={t('identityProviders.issuer')} id="provider-issuer" type="url" required maxLength={500} value={issuer} onInput={text(setIssuer)} hint={t('identityProviders.issuerHint')} />
      <Field label={t('identityProviders.clientId')} id="provider-client-id" required maxLength={256} value={clientId} onInput={text(setClientId)} />
      <Field
        label={t('identityProviders.clientSecret')}
        id="provider-client-secret"
        type="password"
        autoComplete="new-password"
        required={!provider}
        maxLength={512}
        value={clientSecret}
        onInput={text(setClientSecret)}
        hint={provider ? t('identityProviders.clientSecretKeep') : t('identityProviders.clientSecretHint')}
      />
      <Field label={t('identityProviders.domains')} id="provider-domains" required value={domains} onInput={text(setDomains)} hint={t('identityProviders.domainsHint')} />
      <Field label={t('identityProviders.scopes')} id="provider-scopes" value={scopes} onInput={text(setScopes)} hint={t('identityProviders.scopesHint')} />
      <Field label={t('identityProviders.groupsClaim')} id="provider-groups-claim" required maxLength={100} value={groupsClaim} onInput={text(setGroupsClaim)} />
      <div class="field">
        <label for="provider-mappings">{t('identityProviders.mappings')}</label>
        <textarea id="provider-mappings" rows={3} aria-describedby="provider-mappings-hint" value={mappings} onInput={text(setMappings)} />
        <small id="provider-mappings-hint" class="hint">
          {t('identityProviders.mappingsHint')}
        </small>
      </div>
      <div class="field">
        <label>
          <input type="checkbox" id="provider-create-unknown" checked={createUnknown} onChange={(e) => setCreateUnknown((e.currentTarget as HTMLInputElement).checked)} /> {t('identityProviders.createUnknown')}
        </label>
      </div>
      <div class="field">
        <label>
          <input type="checkbox" id="provider-sso-required" checked={ssoRequired} onChange={(e) => setSsoRequired((e.currentTarget as HTMLInputElement).checked)} /> {t('identityProviders.ssoRequired')}
        </label>
      </div>
      <Field label={t('identityProviders.amr')} id="provider-amr" value={amr} onInput={text(setAmr)} hint={t('identityProviders.amrHint')} />
      <Field label={t('identityProviders.acr')} id="provider-acr" value={acr} onInput={text(setAcr)} />
      <ErrorMessage error={error ?? removal.error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? t('common.saving') : t('common.save')}
        </button>
        {provider && (
          <button type="button" class="secondary" disabled={removal.busy} onClick={removal.submit}>
            {t('identityProviders.delete')}
          </button>
        )}
        <a href={href('identity-providers')}>{t('common.cancel')}</a>
      </div>
    </form>
  );
}

/** The page as the navigation opens it (its entry: identity-providers.entry.ts). */
export const Route = ({ id }: PageProps) => <IdentityProvidersPage providerId={id} />;
