// The chosen language. It comes from the browser's preferences until the person picks one with
// the switch (remembered in localStorage). Picked while signed in, it also becomes the language of
// the messages the service sends them (PATCH /me: app.tsx).
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { translator, type Language, type T } from './messages.js';

export { LANGUAGES, type Language, type MessageKey, type T } from './messages.js';

const CHOICE_KEY = 'backoffice.language';

/** The language the person picked with the switch in this browser, if they did. */
export function chosenLanguage(): Language | null {
  const saved = window.localStorage.getItem(CHOICE_KEY);
  return saved === 'en' || saved === 'fr' ? saved : null;
}

/** The saved choice, else the first of the browser's languages we speak, else English. */
export function initialLanguage(): Language {
  const saved = chosenLanguage();
  if (saved) return saved;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split('-')[0];
    if (base === 'fr' || base === 'en') return base;
  }
  return 'en';
}


interface I18n {
  language: Language;
  setLanguage(language: Language): void;
  t: T;
  /** Dates and times in the chosen language. */
  formatDate(value: string | null | undefined): string;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ComponentChildren }) {
  const [language, setLanguageState] = useState<Language>(initialLanguage);
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);
  const setLanguage = (next: Language) => {
    window.localStorage.setItem(CHOICE_KEY, next);
    setLanguageState(next);
  };
  const t = translator(language);
  const dateFormat = new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' });
  const formatDate = (value: string | null | undefined) => (value ? dateFormat.format(new Date(value)) : t('common.never'));
  return <I18nContext.Provider value={{ language, setLanguage, t, formatDate }}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useI18n outside I18nProvider');
  return value;
}
