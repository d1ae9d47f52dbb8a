/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t as schema } from 'elysia'
import type { AppContext } from '../context'
import { t, th } from '../i18n'
import { LOCALES, LOCALE_NAMES, isLocale } from '../i18n/locales'
import { langCookieName } from '../i18n/request'
import { cookie } from '../lib/cookies'
import { seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { CsrfField } from '../views/layout'
import { accountPage } from './security'
import { forbidden } from './sign-in'
import { csrfAccepted, readSession } from './web'
import type { User } from './users'

/** The IANA zones this runtime knows (Intl), UTC first: the only values /account accepts. */
export const TIME_ZONES: readonly string[] = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')]
const ZONES: ReadonlySet<string> = new Set(TIME_ZONES)
export const isTimeZone = (value: unknown): value is string => typeof value === 'string' && ZONES.has(value)

const LanguageForm = schema.Object({ csrf_token: schema.Optional(schema.String()), locale: schema.Optional(schema.String()), time_zone: schema.Optional(schema.String()) })

// The ~420 zones' options are the same on every page: made once, the chosen one marked per page.
const ZONE_OPTIONS = TIME_ZONES.map((z) => `<option value="${z}">${z}</option>`).join('')
const zoneOptions = (zone: string): string => ZONE_OPTIONS.replace(`<option value="${zone}">`, `<option value="${zone}" selected>`)

/** /account → "Language and time zone": empty language is "automatic" (the browser's), empty zone UTC. */
export function LanguageSection(props: { csrf: string; user: User }) {
  const locale = props.user.locale ?? ''
  const zone = props.user.timeZone ?? 'UTC'
  return (
    <>
      <h2>{th('account.language.title')}</h2>
      <form method="post" action="/account/language">
        <CsrfField token={props.csrf} />
        <label for="account-locale">{th('account.language.language')}</label>
        <select id="account-locale" name="locale">
          <option value="" selected={locale === ''}>
            {th('account.language.automatic')}
          </option>
          {LOCALES.map((l) => (
            <option value={l} lang={l} selected={l === locale} safe>
              {LOCALE_NAMES[l]}
            </option>
          ))}
        </select>
        <label for="account-zone">{th('account.language.timeZone')}</label>
        <select id="account-zone" name="time_zone">
          {zoneOptions(zone)}
        </select>
        <p class="muted">{th('account.language.hint')}</p>
        <div class="actions">
          <button type="submit">{th('account.language.save')}</button>
        </div>
      </form>
    </>
  )
}

/** POST /account/language: the user's choice, which then decides every page (after an app's ui_locales) and every mail to them. */
export function accountLanguageRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  return new Elysia({ name: 'account-language' }).post(
    '/account/language',
    async function chooseLanguage({ request, body }) {
      const session = await readSession(ctx, request)
      if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
      const locale = body.locale ?? ''
      const zone = body.time_zone ?? 'UTC'
      if ((locale !== '' && !isLocale(locale)) || !isTimeZone(zone)) return accountPage(ctx, request, session, { status: 400, error: () => t('account.language.refused') })
      await ctx.store.users.setLanguage(session.user.id, { locale: locale === '' ? null : locale, timeZone: zone === 'UTC' ? null : zone })
      // The footer's cookie follows, so the pages before the next sign-in speak it too.
      return seeOther('/account', locale === '' ? [] : [cookie(langCookieName(secure), locale, { maxAgeSeconds: 365 * 24 * 3600, secure })])
    },
    { parse: parsePageForm, body: LanguageForm, detail: { hide: true } },
  )
}
