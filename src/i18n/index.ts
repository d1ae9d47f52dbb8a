/**
 * The words of pages and mails (SPEC "Brand and language"). A page renders synchronously
 * (src/views/page.ts), so the language of a request is a "speech" set around that render:
 * components call `t()`/`th()` with no language argument, and concurrent requests never share
 * one (nothing awaits inside a render). Outside a render — a mail, a test — `speaking()` sets it.
 */
import { CATALOGS, type CompiledCatalog } from './catalog'
import { dirOf, type Locale } from './locales'
import type { Args, HtmlValue, MessageKey, RawHtml, TextValue } from './types'

export type { Locale } from './locales'
export type { MessageKey } from './types'

/** The language, time zone and page address a render speaks in. */
export interface Speech {
  readonly locale: Locale
  readonly dir: 'ltr' | 'rtl'
  /** An IANA zone (the user's, else UTC): every time shown is in it and names it. */
  readonly timeZone: string
  /** Where the footer's language menu comes back to (this page's path and query). */
  readonly here: string
  /**
   * Where the menu posts: `/language`, or on a protected site's own origin (forward-auth's pages,
   * where the proxy sends only `/.latchkey/` to Latchkey) `/.latchkey/language`.
   */
  readonly menu?: string
  readonly messages: CompiledCatalog
}

export function speech(locale: Locale, timeZone = 'UTC', here = '/'): Speech {
  return { locale, dir: dirOf(locale), timeZone, here, messages: CATALOGS[locale] }
}

const ENGLISH = speech('en')
let current: Speech = ENGLISH

/** Runs `render` (synchronous) speaking `s`; the previous speech is back afterwards. */
export function speaking<T>(s: Speech, render: () => T): T {
  const before = current
  current = s
  try {
    return render()
  } finally {
    current = before
  }
}

/** The speech of the render in progress (English outside one). */
export const currentSpeech = (): Speech => current

/** A message as plain text: for attributes (through attr()), `safe` children, titles, mail text. */
export function t<K extends MessageKey>(key: K, ...args: Args<K, TextValue>): string {
  return current.messages[key].text(args[0])
}

/** A message as HTML: its text escaped, string values escaped, `raw()` values as they are. */
export function th<K extends MessageKey>(key: K, ...args: Args<K, HtmlValue>): JSX.Element {
  return current.messages[key].html(args[0])
}

/** Markup (already escaped, e.g. `<strong safe>{name}</strong>`) to place into `th()`. */
export const raw = (html: JSX.Element): RawHtml => ({ html: html as string })

const formats = new Map<string, Intl.DateTimeFormat>()
type TimeStyle = 'date' | 'minute' | 'second'

/** The fields of each style: the day; with hours and minutes (and seconds) it names the zone. */
function fieldsOf(locale: Locale, style: TimeStyle): Intl.DateTimeFormatOptions {
  // English keeps the unambiguous ISO order the pages always used (2026-11-24 09:30 UTC).
  const day: Intl.DateTimeFormatOptions = locale === 'en' ? { year: 'numeric', month: '2-digit', day: '2-digit' } : { year: 'numeric', month: 'short', day: 'numeric' }
  if (style === 'date') return day
  return { ...day, hour: '2-digit', minute: '2-digit', ...(style === 'second' ? { second: '2-digit' } : {}), hourCycle: 'h23', timeZoneName: 'short' }
}

/** A cached formatter per locale, zone and style (bounded: the zones in use are few). */
function formatter(locale: Locale, timeZone: string, style: TimeStyle): Intl.DateTimeFormat {
  const key = `${locale}|${timeZone}|${style}`
  let f = formats.get(key)
  if (!f) {
    if (formats.size >= 512) formats.clear()
    f = new Intl.DateTimeFormat(locale, { ...fieldsOf(locale, style), timeZone })
    formats.set(key, f)
  }
  return f
}

/**
 * A time in the current speech's language and zone; with a time of day, the zone is named
 * (SPEC: "Dates and times show their time zone"). `date` is the day alone, in that zone.
 */
export function formatTime(at: number, style: TimeStyle = 'minute', s: Speech = current): string {
  const f = formatter(s.locale, s.timeZone, style)
  if (s.locale !== 'en') return f.format(at)
  const p: Record<string, string> = {}
  for (const part of f.formatToParts(at)) p[part.type] = part.value
  const day = `${p.year}-${p.month}-${p.day}`
  if (style === 'date') return day
  return `${day} ${p.hour}:${p.minute}${style === 'second' ? ':' + p.second : ''} ${p.timeZoneName}`
}
