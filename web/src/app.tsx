// The application: the sign-in page while signed out, otherwise the shell around the routed page.
// The shell reads GET /me once per sign-in: who is signed in and which pages their permissions open.
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, call, signOut, tokens } from './api/client.js';
import type { components } from '../../generated/openapi.js';
import { LANGUAGES, chosenLanguage, useI18n, type Language, type MessageKey } from './i18n.js';
import { useLoad } from './load.js';
import { href, navigate, useRoute } from './router.js';
import { SignInPage } from './pages/sign-in.js';
import { PasswordPage } from './pages/password.js';
import { SecurityPage } from './pages/security.js';
import { AcceptInvitationPage } from './pages/invitations.js';
import { ForgotPasswordPage, ResetPasswordPage } from './pages/password-reset.js';
import { ErrorMessage, Loading, PageTitle } from './ui.js';
import { StepUpDialog, StepUpReturn } from './step-up.js';
import { ApiError } from './api/problem.js';
import * as pages from './pages/registry.js';
import { loadPage } from './pages/load.js';
import { navigationOf, type PageEntry, type PageProps, type Section } from './page-entry.js';

type Me = components['schemas']['Me'];
type Permission = components['schemas']['Permission'];

/** A page of the navigation, and the permission that opens it (null: every signed-in person). */
interface NavPage {
  route: string;
  label: MessageKey;
  needs: Permission | null;
}

/** The section labels; `top` (Home alone) has none. */
const SECTION_LABELS: Record<Section, MessageKey | null> = {
  top: null,
  work: 'nav.section.work',
  people: 'nav.section.people',
  activity: 'nav.section.activity',
  account: 'nav.section.account',
};

const ENTRIES: readonly PageEntry[] = Object.values(pages).map((entry) => entry.page);

/**
 * The navigation, in sections (a column beside the page, so more pages add lines, not rows), from
 * the registry of pages: each in its entry's section, at its entry's place. A section none of
 * whose pages the person may open is not shown. Home comes first, alone; the person's own account last.
 */
const NAV: { label: MessageKey | null; pages: NavPage[] }[] = navigationOf(ENTRIES).map(({ section, pages: links }) => ({
  label: SECTION_LABELS[section],
  pages: links.map((link) => ({ ...link, label: link.label as MessageKey })),
}));

type NavSections = typeof NAV;

/** The sections and pages this person may open, in order. */
function navigationFor(permissions: readonly string[]): NavSections {
  return NAV.map((section) => ({ ...section, pages: section.pages.filter((item) => item.needs === null || permissions.includes(item.needs)) })).filter((section) => section.pages.length > 0);
}

export function App() {
  const [signedIn, setSignedIn] = useState(tokens.signedIn);
  const [notice, setNotice] = useState<MessageKey | null>(null);
  const route = useRoute();

  useEffect(
    () =>
      tokens.onSignOut((reason) => {
        setSignedIn(false);
        setNotice(reason === 'session_ended' ? 'signIn.sessionEnded' : 'signIn.signedOut');
        navigate('sign-in');
      }),
    [],
  );

  // The link of an invitation's message opens its page, signed out (a signed-in person following it signs out first).
  if (!signedIn && route[0] === 'invitation') {
    return (
      <>
        <Header />
        <AcceptInvitationPage
          onSignedIn={() => {
            setSignedIn(true);
            navigate('');
          }}
        />
      </>
    );
  }
  // A recovery link's page, signed in or not (its use ends every session of the person).
  if (route[0] === 'password-reset') {
    return (
      <>
        <Header />
        <ResetPasswordPage />
      </>
    );
  }
  if (!signedIn && route[0] === 'forgot-password') {
    return (
      <>
        <Header />
        <ForgotPasswordPage />
      </>
    );
  }
  if (!signedIn) {
    return (
      <>
        <Header />
        <SignInPage
          notice={notice}
          onSignedIn={() => {
            setNotice(null);
            setSignedIn(true);
            // A link into a page (a message's link, a bookmark) opens that page once signed in.
            if (!route[0] || route[0] === 'sign-in') navigate('');
          }}
        />
      </>
    );
  }
  return <SignedIn />;
}

/**
 * The person's language for the messages the service sends them (security notices), set from the
 * language they pick here. Best effort: a refusal (a session ending, a password to change first)
 * leaves the messages in their language as it was, and the page's own language is chosen anyway.
 */
function rememberLanguage(language: Language): void {
  call(() => api.PATCH('/me', { body: { language } })).catch(() => undefined);
}

function SignedIn() {
  const route = useRoute();
  const me = useLoad(() => call(() => api.GET('/me')), []);
  // A language picked on the sign-in page, before the service knew who was choosing: theirs from now on, unless they chose one already.
  useEffect(() => {
    const picked = chosenLanguage();
    if (me.data && me.data.language === null && picked) rememberLanguage(picked);
  }, [me.data]);
  // On a narrow screen the navigation is behind the header's Menu button; opening a page closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [route.join('/')]);
  // What the server refuses everything else for, in its order: a password someone else set is
  // replaced first, then a role requiring a second factor has one enrolled.
  const refusal = me.error instanceof ApiError ? me.error.problem?.code : undefined;
  const required =
    refusal === 'password_change_required' ? <PasswordPage required onChanged={me.reload} /> : refusal === 'second_factor_required' ? <SecurityPage required onEnrolled={me.reload} /> : null;
  if (required) {
    return (
      <>
        <Header canSignOut />
        <main id="main" tabIndex={-1}>
          {required}
        </main>
        <StepUpDialog />
        <StepUpReturn />
      </>
    );
  }
  const sections = me.data ? navigationFor(me.data.permissions) : [];
  const page = route[0] && route[0] !== 'sign-in' ? route[0] : sections[0]?.pages[0]?.route;
  return (
    <>
      <Header me={me.data} menu={sections.length > 0 ? { open: menuOpen, toggle: () => setMenuOpen(!menuOpen) } : undefined} />
      <div class="layout">
        {sections.length > 0 && <Navigation sections={sections} current={page} open={menuOpen} onNavigate={() => setMenuOpen(false)} />}
        <main id="main" tabIndex={-1}>
          {me.error ? <ErrorMessage error={me.error} onRetry={me.reload} /> : !me.data ? <Loading /> : <Page name={page} id={route[1]} me={me.data} />}
        </main>
      </div>
      <StepUpDialog />
      <StepUpReturn />
    </>
  );
}

/** The routed page, loaded when first opened (its entry's `load`), or "not found". */
function Page({ name, id, me }: { name: string | undefined; id: string | undefined; me: Me }) {
  const { t } = useI18n();
  const entry = ENTRIES.find((candidate) => candidate.route === name);
  const loaded = useLoad(async () => (entry ? { Component: await loadPage(entry) } : null), [entry]);
  if (!entry) return <PageTitle>{t('error.notFound')}</PageTitle>;
  if (loaded.error) return <ErrorMessage error={loaded.error} onRetry={loaded.reload} />;
  if (loaded.loading || !loaded.data) return <Loading />;
  const Component: FunctionComponent<PageProps> = loaded.data.Component;
  return <Component id={id} me={me} />;
}

/**
 * The navigation: links in labelled groups, in reading order (Tab walks them top to bottom). Below
 * 60rem (a phone) it is folded away unless the header's Menu button opened it (`open`).
 */
function Navigation({ sections, current, open, onNavigate }: { sections: NavSections; current: string | undefined; open: boolean; onNavigate: () => void }) {
  const { t } = useI18n();
  const links = (pages: NavPage[]) => (
    <ul>
      {pages.map((item) => (
        <li key={item.route}>
          <a href={href(item.route)} aria-current={current === item.route ? 'page' : undefined} onClick={onNavigate}>
            {t(item.label)}
          </a>
        </li>
      ))}
    </ul>
  );
  return (
    <nav id="main-navigation" class={open ? 'sidebar open' : 'sidebar'} aria-label={t('nav.label')}>
      {sections.map((section) =>
        section.label === null ? (
          <div key="top">{links(section.pages)}</div>
        ) : (
          <div key={section.label} role="group" aria-labelledby={`nav-${section.label}`}>
            <p class="nav-section" id={`nav-${section.label}`}>
              {t(section.label)}
            </p>
            {links(section.pages)}
          </div>
        ),
      )}
    </nav>
  );
}

/** `menu`: the button that opens the navigation on a narrow screen (hidden on a wide one, where the navigation is always shown). */
function Header({ me, canSignOut = me !== undefined, menu }: { me?: Me | undefined; canSignOut?: boolean; menu?: { open: boolean; toggle: () => void } | undefined }) {
  const { t, language, setLanguage } = useI18n();
  return (
    <header class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        {t('app.skip')}
      </a>
      <span class="brand">{t('app.title')}</span>
      {menu && (
        <button type="button" class="menu" aria-expanded={menu.open} aria-controls="main-navigation" onClick={menu.toggle}>
          {t('nav.menu')}
        </button>
      )}
      <div class="language">
        {me && <span class="who">{t('shell.signedInAs', { name: `${me.user.first_name} ${me.user.last_name}` })}</span>}
        <label for="language">{t('lang.label')}</label>
        <select
          id="language"
          value={language}
          onChange={(e) => {
            const picked = (e.currentTarget as HTMLSelectElement).value as Language;
            setLanguage(picked);
            if (me) rememberLanguage(picked);
          }}
        >
          {Object.entries(LANGUAGES).map(([code, name]) => (
            <option key={code} value={code} lang={code}>
              {name}
            </option>
          ))}
        </select>
        {canSignOut && (
          <button type="button" class="signout" onClick={() => void signOut()}>
            {t('nav.signOut')}
          </button>
        )}
      </div>
    </header>
  );
}
