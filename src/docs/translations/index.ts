/**
 * The API reference's own texts (every summary and description of the OpenAPI document) in the
 * other eleven languages, for `/docs`: keyed by the English text itself, as the document states it
 * (src/docs/oauth.ts, api.ts and the routes' schemas), so an edited English text has no
 * translation until its translators give one — tests/i18n/docs-reference.test.ts fails until
 * then, and the page shows the English, marked `lang="en"`. `/openapi.json` stays English: it is
 * for client generators, as API error texts stay English (RFC 6749).
 */
import type { Locale } from '../../i18n/locales'
import ar from './ar.json'
import de from './de.json'
import es from './es.json'
import fr from './fr.json'
import it from './it.json'
import ja from './ja.json'
import nl from './nl.json'
import pl from './pl.json'
import ptBR from './pt-BR.json'
import sv from './sv.json'
import zhCN from './zh-CN.json'

export const REFERENCE_TRANSLATIONS: Readonly<Record<Exclude<Locale, 'en'>, Readonly<Record<string, string>>>> = {
  ar,
  de,
  es,
  fr,
  it,
  ja,
  nl,
  pl,
  'pt-BR': ptBR,
  sv,
  'zh-CN': zhCN,
}

/** `english` in `locale`, or undefined when the reference has no words for it there (English readers: always). */
export function referenceText(locale: Locale, english: string): string | undefined {
  if (locale === 'en') return english
  const words = REFERENCE_TRANSLATIONS[locale][english]
  return words === undefined || !Object.hasOwn(REFERENCE_TRANSLATIONS[locale], english) ? undefined : words
}
