// Entry point of the back-office SPA.
import { render } from 'preact';
import { App } from './app.js';
import { I18nProvider } from './i18n.js';
import './styles.css';

render(
  <I18nProvider>
    <App />
  </I18nProvider>,
  document.getElementById('app')!,
);
