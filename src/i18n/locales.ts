/**
 * The languages Latchkey speaks (SPEC "Brand and language"), as BCP 47 tags. Arabic is written
 * right to left; every page sets `<html lang dir>` from here.
 */
export const LOCALES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt-BR', 'pl', 'sv', 'ja', 'zh-CN', 'ar'] as const
export type Locale = (typeof LOCALES)[number]

const RTL: ReadonlySet<Locale> = new Set<Locale>(['ar'])
export const dirOf = (locale: Locale): 'ltr' | 'rtl' => (RTL.has(locale) ? 'rtl' : 'ltr')

/** Each language's own name, as the language menu shows it (never translated: a reader finds their own). */
export const LOCALE_NAMES: Record<Locale, string> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
  it: 'Italiano',
  nl: 'Nederlands',
  'pt-BR': 'Português (Brasil)',
  pl: 'Polski',
  sv: 'Svenska',
  ja: '日本語',
  'zh-CN': '简体中文',
  ar: 'العربية',
}

const BY_LOWER = new Map<string, Locale>(LOCALES.map((l) => [l.toLowerCase(), l]))
// A bare language names the variant we have (`pt` → pt-BR, `zh` → zh-CN).
const BY_LANGUAGE = new Map<string, Locale>(LOCALES.map((l) => [l.slice(0, 2).toLowerCase(), l]))

/**
 * The locale a language tag asks for, if we speak it: exact (case-insensitive), else its
 * language alone (`de-AT` → de, `pt-PT` → pt-BR, `zh-Hans-CN` → zh-CN). `zh-TW`/`zh-Hant` is not
 * Simplified Chinese: no match.
 */
export function matchLocale(tag: string): Locale | undefined {
  const lower = tag.trim().toLowerCase()
  if (lower.length === 0 || lower.length > 35) return undefined
  const exact = BY_LOWER.get(lower)
  if (exact) return exact
  if (/^zh-(?:hant|tw|hk|mo)\b/.test(lower)) return undefined
  return BY_LANGUAGE.get(lower.split('-')[0]!)
}

/** A stored or submitted locale, exactly one of ours. */
export const isLocale = (value: unknown): value is Locale => typeof value === 'string' && (LOCALES as readonly string[]).includes(value)

/**
 * `Accept-Language` (RFC 9110 §12.5.4): the first locale we speak, by descending q (ties keep
 * the header's order); q=0 means "not this". Undefined when none matches.
 */
export function fromAcceptLanguage(header: string): Locale | undefined {
  let best: Locale | undefined
  let bestQ = 0
  // Bounded: a header is read up to 32 entries.
  const entries = header.split(',', 32)
  for (const entry of entries) {
    const [tag, ...rest] = entry.split(';')
    let q = 1
    for (const p of rest) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)
      if (m) q = Number(m[1])
    }
    if (q <= bestQ || q > 1) continue
    const locale = matchLocale(tag ?? '')
    if (locale) {
      best = locale
      bestQ = q
    }
  }
  return best
}

/** `ui_locales` (OpenID Connect Core §3.1.2.1): space-separated tags in order of preference. */
export function fromUiLocales(value: string): Locale | undefined {
  for (const tag of value.split(' ', 16)) {
    const locale = matchLocale(tag)
    if (locale) return locale
  }
  return undefined
}
