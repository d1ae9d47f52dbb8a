import { Elysia, t } from 'elysia'
import { readSession, safeReturnTo } from '../accounts/web'
import type { AppContext } from '../context'
import { cookie } from '../lib/cookies'
import { PageError } from '../lib/errors'
import { seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { isLocale } from './locales'
import { langCookieName } from './request'

export const LanguageForm = t.Object({ locale: t.Optional(t.String()), return_to: t.Optional(t.String()) })

const YEAR = 365 * 24 * 3600

/**
 * Whether a form POST came from a page of this server. The language menu is in every page's
 * footer, pages a browser without a session or CSRF cookie sees too (error pages, the start of
 * a sign-in), so it cannot carry the house's session-bound token; what it guards against is
 * the same (another site making the browser switch language), and a browser says where a POST
 * comes from: `Origin` (sent on every cross-site POST) or, failing that, `Sec-Fetch-Site`. Our
 * pages send `Referrer-Policy: no-referrer`, under which Chromium sends `Origin: null` even for
 * a same-origin form: then `Sec-Fetch-Site` (which no page can set) decides. Neither: refused.
 */
export function fromThisSite(request: Request, issuerOrigin: string): boolean {
  const origin = request.headers.get('origin')
  if (origin !== null && origin !== 'null') return origin === issuerOrigin
  return request.headers.get('sec-fetch-site') === 'same-origin'
}

/** The menu's answer: the language cookie `name` for a year, then back to the page (a path of this origin), else `/`. */
export function languageChosen(name: string, locale: string, returnTo: unknown, secure: boolean): Response {
  return seeOther(safeReturnTo(returnTo) ?? '/', [cookie(name, locale, { maxAgeSeconds: YEAR, secure })])
}

/** POST /language: the footer's language menu (SPEC "Brand and language": a cookie), then back to the page. */
export function languageRoutes(ctx: AppContext) {
  const issuerOrigin = new URL(ctx.config.issuer).origin
  const name = langCookieName(ctx.config.secureCookies)
  return new Elysia({ name: 'language' }).post(
    '/language',
    async function chooseLanguage({ request, body }) {
      if (!fromThisSite(request, issuerOrigin)) throw new PageError(403, 'error.forbidden')
      if (!isLocale(body.locale)) throw new PageError(400, 'error.badLanguage')
      // Signed in, the menu changes the user's choice too: it ranks above the cookie, so the cookie alone would not show.
      const session = await readSession(ctx, request)
      if (session && session.user.locale !== body.locale) await ctx.store.users.setLanguage(session.user.id, { locale: body.locale, timeZone: session.user.timeZone ?? null })
      return languageChosen(name, body.locale, body.return_to, ctx.config.secureCookies)
    },
    { parse: parsePageForm, body: LanguageForm, detail: { hide: true } },
  )
}
