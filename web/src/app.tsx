// The application: the sign-in page while signed out, otherwise the shell around the routed page.
import { useEffect, useState } from 'preact/hooks';
import { tokens } from './api/client.js';
import { LANGUAGES, useI18n, type Language, type MessageKey } from './i18n.js';
import { href, navigate, useRoute } from './router.js';
import { SignInPage } from './pages/sign-in.js';
import { UsersPage } from './pages/users.js';
import { PageTitle } from './ui.js';

const NAV: { route: string; label: MessageKey }[] = [{ route: 'users', label: 'nav.users' }];

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

  if (!signedIn) {
    return (
      <>
        <Header />
        <SignInPage
          notice={notice}
          onSignedIn={() => {
            setNotice(null);
            setSignedIn(true);
            navigate('users');
          }}
        />
      </>
    );
  }
  return (
    <>
      <Header route={route[0]} />
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: string[] }) {
  const { t } = useI18n();
  switch (route[0]) {
    case undefined:
    case 'sign-in':
    case 'users':
      return <UsersPage />;
    default:
      return <PageTitle>{t('error.notFound')}</PageTitle>;
  }
}

function Header({ route }: { route?: string | undefined }) {
  const { t, language, setLanguage } = useI18n();
  return (
    <header class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        {t('app.skip')}
      </a>
      <span class="brand">{t('app.title')}</span>
      {tokens.signedIn && (
        <nav aria-label={t('nav.label')}>
          <ul>
            {NAV.map((item) => (
              <li key={item.route}>
                <a href={href(item.route)} aria-current={route === item.route || (!route && item.route === 'users') ? 'page' : undefined}>
                  {t(item.label)}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <div class="language">
        <label for="language">{t('lang.label')}</label>
        <select id="language" value={language} onChange={(e) => setLanguage(e.currentTarget.value as Language)}>
          {Object.entries(LANGUAGES).map(([code, name]) => (
            <option key={code} value={code} lang={code}>
              {name}
            </option>
          ))}
        </select>
      </div>
    </header>
  );
}
