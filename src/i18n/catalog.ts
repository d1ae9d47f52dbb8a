/**
 * The catalogs, compiled once at start-up: each message becomes two functions (plain text, and
 * HTML with its text escaped), so a request never parses a message. A locale that lacks a
 * message (while its translation is partial) answers the English one.
 */
import { dirOf, LOCALES, type Locale } from './locales'
import type { Catalog, HtmlValue, MessageKey, Plural, PluralCategory } from './types'
import en from './messages/en'
import de from './messages/de'
import fr from './messages/fr'
import es from './messages/es'
import it from './messages/it'
import nl from './messages/nl'
import ptBR from './messages/pt-BR'
import pl from './messages/pl'
import sv from './messages/sv'
import ja from './messages/ja'
import zhCN from './messages/zh-CN'
import ar from './messages/ar'

/** Every locale's source. A translator's file replaces its `Partial` stub with a full `satisfies Catalog`. */
export const SOURCES: Record<Locale, Partial<Catalog>> = { en, de, fr, es, it, nl, 'pt-BR': ptBR, pl, sv, ja, 'zh-CN': zhCN, ar }

type Params = Readonly<Record<string, HtmlValue>> | undefined
type Render = (params: Params) => string
export interface Compiled {
  text: Render
  html: Render
}
export type CompiledCatalog = Readonly<Record<MessageKey, Compiled>>

/** Text content needs only `&`, `<` and `>` escaped (th() never feeds an attribute: those take t() through attr()). */
const escape = (s: string) => (/[&<>]/.test(s) ? s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : s)
const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g

/** Splits a message at its placeholders: literal parts at even indexes, names at odd ones. */
export function placeholders(message: string): string[] {
  return [...message.matchAll(PLACEHOLDER)].map((m) => m[1]!)
}

/** FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE (Unicode's bidirectional algorithm, UAX #9). */
const FSI = '\u2068'
const PDI = '\u2069'

/**
 * A right-to-left language's messages hold each value in an isolate, as Fluent does: a path
 * pattern, a host or an address keeps its own order (`^/(?!public/)`, not `(/public!?)/^`) and
 * does not reorder the words around it. Numbers are the locale's own and need none.
 */
function compileString(message: string, number: Intl.NumberFormat, isolate: boolean): Compiled {
  const parts = message.split(PLACEHOLDER)
  if (parts.length === 1) {
    const html = escape(message)
    return { text: () => message, html: () => html }
  }
  const htmlParts = parts.map((p, i) => (i % 2 === 0 ? escape(p) : p))
  const value = (params: Params, name: string, asHtml: boolean): string => {
    const v = params?.[name]
    if (v === undefined) return ''
    if (typeof v === 'number') return number.format(v)
    const said = typeof v === 'string' ? (asHtml ? escape(v) : v) : asHtml ? v.html : ''
    return isolate && said !== '' ? FSI + said + PDI : said
  }
  const render = (literal: string[], asHtml: boolean) => (params: Params) => {
    let out = literal[0]!
    for (let i = 1; i < literal.length; i += 2) out += value(params, literal[i]!, asHtml) + literal[i + 1]!
    return out
  }
  return { text: render(parts, false), html: render(htmlParts, true) }
}

function compilePlural(forms: Plural, rules: Intl.PluralRules, number: Intl.NumberFormat, isolate: boolean): Compiled {
  const compiled = new Map<string, Compiled>(Object.entries(forms).map(([c, m]) => [c, compileString(m as string, number, isolate)]))
  const pick = (params: Params) => compiled.get(rules.select(Number(params?.count ?? 0))) ?? compiled.get('other')!
  return { text: (p) => pick(p).text(p), html: (p) => pick(p).html(p) }
}

function compile(locale: Locale, source: Partial<Catalog>, fallback: CompiledCatalog | undefined): CompiledCatalog {
  const rules = new Intl.PluralRules(locale)
  const number = new Intl.NumberFormat(locale)
  const isolate = dirOf(locale) === 'rtl'
  const out = {} as Record<MessageKey, Compiled>
  for (const key of Object.keys(en) as MessageKey[]) {
    const message = source[key]
    if (message === undefined) out[key] = fallback![key]
    else out[key] = typeof message === 'string' ? compileString(message, number, isolate) : compilePlural(message, rules, number, isolate)
  }
  return out
}

const english = compile('en', en, undefined)
/** Every locale's compiled catalog, made when this module loads (start-up). */
export const CATALOGS: Readonly<Record<Locale, CompiledCatalog>> = Object.fromEntries(
  LOCALES.map((l) => [l, l === 'en' ? english : compile(l, SOURCES[l], english)]),
) as Record<Locale, CompiledCatalog>

/** The plural categories a locale's grammar uses (CLDR, through Intl). */
export const pluralCategories = (locale: Locale): PluralCategory[] => new Intl.PluralRules(locale).resolvedOptions().pluralCategories as PluralCategory[]
