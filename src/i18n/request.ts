/**
 * The language of a request, decided once (SPEC "Brand and language", in this order):
 * `ui_locales` of the authorization request this page belongs to, the user's choice (/account),
 * the footer menu's cookie, `Accept-Language`, then DEFAULT_LOCALE. A value we do not speak
 * passes to the next rule; it is never an error.
 */
import { parseCookies } from '../lib/cookies'
import { pathOf } from '../web/request-guard'
import { speech, type Speech } from './index'
import { fromAcceptLanguage, fromUiLocales, isLocale, type Locale } from './locales'

/** The footer menu's cookie (a year; `__Host-` when cookies are Secure, like the others). */
export const langCookieName = (secure: boolean) => `${secure ? '__Host-' : ''}lk_lang`

/**
 * The footer menu's form on a protected site's own origin (SPEC "Protecting apps that speak no
 * OAuth"): the proxy routes only `/.latchkey/` of a site to Latchkey, so `/language` there would
 * reach the protected app.
 */
export const SITE_LANGUAGE_PATH = '/.latchkey/language'

/** What a user chose on /account (null: not chosen). */
export interface UserLanguage {
  locale?: string | null
  timeZone?: string | null
}

// Browsers send a handful of distinct headers: each is parsed once (bounded).
const accepted = new Map<string, Locale | null>()
function acceptLanguage(header: string): Locale | undefined {
  let hit = accepted.get(header)
  if (hit === undefined) {
    hit = header.length > 512 ? null : (fromAcceptLanguage(header) ?? null)
    if (accepted.size >= 256) accepted.clear()
    accepted.set(header, hit)
  }
  return hit ?? undefined
}

/** `ui_locales` of an authorization request given as a path (`/oauth/authorize?…`), if it names one we speak. */
function uiLocalesOf(pathAndQuery: string | null | undefined): Locale | undefined {
  if (!pathAndQuery?.startsWith('/oauth/authorize?')) return undefined
  const value = new URLSearchParams(pathAndQuery.slice(pathAndQuery.indexOf('?') + 1)).get('ui_locales')
  return value ? fromUiLocales(value) : undefined
}

/**
 * The speech of a page: `returnTo` is the authorization request a sign-in (or two-step, or
 * sign-up) page continues to, when the handler knows it (a POST's form field); otherwise the
 * request's own `return_to` query, or the request itself on /oauth/authorize. `uiLocales`: an
 * app's own ui_locales parameter elsewhere (RP-initiated logout, RP-Initiated Logout 1.0 §2).
 * `site`: a page on a protected site's origin, of that scheme (its own cookie, its own menu form).
 */
export function speechOf(
  config: { defaultLocale: Locale; secureCookies: boolean },
  request: Request,
  opts: { user?: UserLanguage | null; returnTo?: string; uiLocales?: string; site?: 'http' | 'https' } = {},
): Speech {
  const url = request.url
  const path = pathOf(url)
  const q = url.indexOf('?')
  const search = q < 0 ? '' : url.slice(q)
  const query = search ? new URLSearchParams(search) : undefined
  const flow =
    (opts.uiLocales ? fromUiLocales(opts.uiLocales) : undefined) ??
    (path === '/oauth/authorize' ? uiLocalesOf(opts.returnTo ?? path + search) : uiLocalesOf(opts.returnTo ?? query?.get('return_to')))
  const chosen = opts.user?.locale
  let locale: Locale | undefined = flow ?? (isLocale(chosen) ? chosen : undefined)
  if (!locale) {
    const cookie = request.headers.get('cookie')
    // On a site's origin the cookie is that host's own, named by its scheme (src/authz/index.ts).
    const name = langCookieName(opts.site ? opts.site === 'https' : config.secureCookies)
    const fromCookie = cookie?.includes('lk_lang=') ? parseCookies(cookie)[name] : undefined
    if (isLocale(fromCookie)) locale = fromCookie
  }
  if (!locale) {
    const header = request.headers.get('accept-language')
    locale = header ? acceptLanguage(header) : undefined
  }
  const here = request.method === 'GET' ? path + search : path
  const spoken = speech(locale ?? config.defaultLocale, opts.user?.timeZone ?? 'UTC', here)
  return opts.site ? { ...spoken, menu: SITE_LANGUAGE_PATH } : spoken
}
