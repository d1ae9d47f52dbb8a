import { describe, expect, test } from 'bun:test'
import { CATALOGS, SOURCES, pluralCategories, placeholders } from '../../src/i18n/catalog'
import { LOCALES, type Locale } from '../../src/i18n/locales'
import type { Plural } from '../../src/i18n/types'
import en from '../../src/i18n/messages/en'

/** Every locale is delivered: each must be complete (a missing, extra or untranslated message fails). */
const COMPLETE: readonly Locale[] = LOCALES

/**
 * Messages that read the same as in English, reviewed: a word the language borrows, or text
 * that is the same by nature. Anything else equal to English is an untranslated message.
 */
const SAME_AS_ENGLISH: Partial<Record<Locale, readonly string[]>> = {
  // "Code", "Administration", "Passkeys", "Passkey", and /admin's "Apps", "Admin", "App", "Name", "Scopes" (OAuth's), "Tokens", "URI", "Administrator", "Callback", "Domains", "Host", the confirmation's "{lose}, {deleted}" (placeholders only), and the endpoints' protocol names Discovery, Token, UserInfo, JWKS: the German words are these.
  de: ['device.code', 'account.admin', 'security.passkeysTitle', 'setup.passkeyName', 'admin.apps.title', 'admin.field.admin', 'admin.field.app', 'admin.field.name', 'admin.field.scopes', 'admin.field.tokens', 'admin.field.uri', 'admin.users.administrator', 'admin.providers.callback', 'admin.providers.domains', 'admin.sites.host', 'admin.confirm.reach', 'admin.endpoint.discovery', 'admin.endpoint.token', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  // "Code", "Administration", /admin's "Sites", "Site", "Actions", "URI", "Type", and the confirmation's "{lose}, {deleted}" (placeholders only), and the endpoints' protocol names UserInfo, Introspection, JWKS: the French words are these.
  fr: ['device.code', 'account.admin', 'admin.sites.title', 'admin.sites.site', 'admin.field.actions', 'admin.field.uri', 'admin.apps.type', 'admin.confirm.reach', 'admin.endpoint.userinfo', 'admin.endpoint.introspection', 'admin.endpoint.jwks'],
  // /admin's "URI", "Tokens", "no", and the confirmation's "{lose}, {deleted}" (placeholders only), and the endpoints' protocol names Token, UserInfo, JWKS: the Spanish words are these.
  es: ['admin.field.uri', 'admin.field.tokens', 'admin.no', 'admin.confirm.reach', 'admin.endpoint.token', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  // "Password", "passkey", "Passkey", /admin's "URI", "App", "no", and the confirmation's "{lose}, {deleted}" (placeholders only), and the endpoints' protocol names Token, UserInfo, JWKS: the Italian words are these.
  it: ['signIn.password', 'security.passwordTitle', 'activity.method.password', 'activity.method.passkey', 'setup.passkeyName', 'admin.field.uri', 'admin.field.app', 'admin.users.password', 'admin.no', 'admin.confirm.reach', 'admin.endpoint.token', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  // /admin's "Apps", "App", "Sites", "Site", "URI", "Tokens", and the confirmation's "{lose}, {deleted}" (placeholders only), and the endpoints' protocol names Token, UserInfo, JWKS: the Brazilian Portuguese words are these.
  'pt-BR': ['admin.apps.title', 'admin.field.app', 'admin.sites.title', 'admin.sites.site', 'admin.field.uri', 'admin.field.tokens', 'admin.confirm.reach', 'admin.endpoint.token', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  // Dutch: "Conflict" (HTTP 409), "Code", and /admin's "Apps", "Sites", "Resources" (Microsoft's Dutch word), "App",
  // "Scopes" (OAuth's), "Tokens", "URI", "Type", "Host", "Site", and the endpoints "Token", "UserInfo", "JWKS" (OpenID Connect's names): the Dutch words are these; "{lose}, {deleted}" is placeholders only.
  // i18a: /docs' "Parameters" and "Headers: {names}" (HTTP's headers, as Dutch developers say them) are Dutch too.
  nl: ['error.status.409', 'device.code', 'admin.apps.title', 'admin.sites.title', 'admin.resources.title', 'admin.field.app', 'admin.field.scopes', 'admin.field.tokens', 'admin.field.uri', 'admin.apps.type', 'admin.sites.host', 'admin.sites.site', 'admin.confirm.reach', 'admin.endpoint.token', 'admin.endpoint.userinfo', 'admin.endpoint.jwks', 'docs.parameters', 'docs.headers'],
  // Polish: "Administrator", "URI", and the endpoints "Token", "UserInfo", "JWKS" (OpenID Connect's names): the Polish words are these; "{lose}, {deleted}" is placeholders only.
  pl: ['admin.users.administrator', 'admin.field.uri', 'admin.confirm.reach', 'admin.endpoint.token', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  // Swedish: "Administration", and /admin's "App", "Tokens", "URI", and the endpoints "Token", "UserInfo", "JWKS" (OpenID Connect's names): the Swedish words are these; "{lose}, {deleted}" is placeholders only.
  sv: ['account.admin', 'admin.field.app', 'admin.field.tokens', 'admin.field.uri', 'admin.confirm.reach', 'admin.endpoint.token', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  // The protocol names URI, UserInfo (OpenID Connect's endpoint) and JWKS stay in Latin letters in these languages' admin pages.
  ja: ['admin.field.uri', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  'zh-CN': ['admin.field.uri', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
  ar: ['admin.field.uri', 'admin.endpoint.userinfo', 'admin.endpoint.jwks'],
}

type Message = string | Plural
const EN = en as Record<string, Message>
const forms = (m: Message): string[] => (typeof m === 'string' ? [m] : Object.values(m).filter((v): v is string => v !== undefined))
const namesOf = (m: Message) => new Set(forms(m).flatMap(placeholders))
const sorted = (s: Iterable<string>) => [...s].sort()

/** What is wrong with one locale's messages (empty: nothing). */
function problems(locale: Locale, complete: boolean): string[] {
  const source = SOURCES[locale] as Record<string, Message>
  const out: string[] = []
  const categories = pluralCategories(locale)
  for (const key of Object.keys(EN)) if (complete && !Object.hasOwn(source, key)) out.push(`${key}: missing`)
  for (const [key, message] of Object.entries(source)) {
    const english = EN[key]
    if (english === undefined) {
      out.push(`${key}: not a message of en.ts`)
      continue
    }
    if (typeof english !== typeof message) {
      out.push(`${key}: ${typeof english === 'string' ? 'a plain message' : 'plural forms'} in English`)
      continue
    }
    const wanted = sorted(namesOf(english))
    if (typeof message === 'string') {
      if (JSON.stringify(sorted(namesOf(message))) !== JSON.stringify(wanted)) out.push(`${key}: placeholders ${sorted(namesOf(message))} instead of ${wanted}`)
    } else {
      // A form may leave out {count} ("one passkey" in words), never add or lose another placeholder.
      const given = namesOf(message)
      const lost = wanted.filter((n) => n !== 'count' && !given.has(n))
      const added = [...given].filter((n) => !wanted.includes(n))
      if (lost.length || added.length) out.push(`${key}: placeholders ${sorted(given)} instead of ${wanted}`)
      for (const c of categories) if (!Object.hasOwn(message, c)) out.push(`${key}: lacks the plural form "${c}"`)
      for (const c of Object.keys(message)) if (!categories.includes(c as never)) out.push(`${key}: "${c}" is not a plural form of ${locale}`)
    }
    for (const text of forms(message)) {
      if (/[<>]/.test(text)) out.push(`${key}: markup in a message (use a placeholder)`)
      if (/\{(?![A-Za-z][A-Za-z0-9_]*\})|(?<!\{[A-Za-z][A-Za-z0-9_]*)\}/.test(text)) out.push(`${key}: a brace that is not a placeholder`)
    }
    if (locale !== 'en' && JSON.stringify(message) === JSON.stringify(english) && !(SAME_AS_ENGLISH[locale] ?? []).includes(key)) out.push(`${key}: same as English (untranslated?)`)
  }
  return out
}

describe('the message catalog (issue 36: every message in every language, same placeholders)', () => {
  for (const locale of LOCALES) {
    const complete = COMPLETE.includes(locale)
    test(`${locale}: ${complete ? 'complete, ' : 'partial (falls back to English), '}translated, placeholders and plural forms as English's`, () => {
      expect(problems(locale, complete)).toEqual([])
    })
  }

  test('the allow-list names only messages that exist and are indeed the same as English', () => {
    for (const [locale, keys] of Object.entries(SAME_AS_ENGLISH)) {
      for (const key of keys!) expect([locale, key, JSON.stringify((SOURCES[locale as Locale] as Record<string, Message>)[key])]).toEqual([locale, key, JSON.stringify(EN[key])])
    }
  })

  test('the checks fail on what they look for', () => {
    const saved = { ...(SOURCES.de as Record<string, Message>) }
    const de = SOURCES.de as Record<string, Message>
    try {
      delete de['signIn.title']
      de['signIn.extra'] = 'Extra'
      de['consent.denied'] = 'Ihr Konto darf {App} nicht verwenden.'
      de['signIn.forgot'] = 'Forgot password?'
      de['signIn.tooManyNetwork'] = { other: 'Zu viele Versuche. {count} Sekunden.' }
      expect(problems('de', true).sort()).toEqual(
        [
          'signIn.title: missing',
          'signIn.extra: not a message of en.ts',
          'consent.denied: placeholders App instead of app',
          'signIn.forgot: same as English (untranslated?)',
          'signIn.tooManyNetwork: lacks the plural form "one"',
        ].sort(),
      )
    } finally {
      for (const k of Object.keys(de)) delete de[k]
      Object.assign(de, saved)
    }
  })

  test('plural categories come from CLDR: Polish needs few and many, Arabic all six, Japanese only other', () => {
    expect(sorted(pluralCategories('pl'))).toEqual(['few', 'many', 'one', 'other'])
    expect(sorted(pluralCategories('ar'))).toEqual(['few', 'many', 'one', 'other', 'two', 'zero'])
    expect(pluralCategories('ja')).toEqual(['other'])
  })

  test('a right-to-left language holds each value in an isolate (U+2068…U+2069), as text and as HTML; left-to-right ones and numbers do not', () => {
    const path = '^/(?!public/)'
    const ar = CATALOGS.ar['admin.input.pathRe2']
    expect(ar.text({ path })).toBe(SOURCES.ar['admin.input.pathRe2']!.toString().replace('{path}', `\u2068${path}\u2069`))
    expect(ar.html({ path: '<b>' })).toContain('«\u2068&lt;b&gt;\u2069»')
    expect(ar.html({ path: { html: '<code>x</code>' } })).toContain('\u2068<code>x</code>\u2069')
    expect(CATALOGS.en['admin.input.pathRe2'].text({ path })).toContain(`“${path}”`)
    for (const locale of LOCALES.filter((l) => l !== 'ar')) expect(CATALOGS[locale]['admin.input.pathRe2'].text({ path })).not.toContain('\u2068')
    // A count is formatted by the locale (Intl), with nothing around it.
    const counted = (Object.keys(en) as Array<keyof typeof en>).find((k) => typeof en[k] === 'object' && placeholders(JSON.stringify(en[k])).includes('count'))!
    expect(CATALOGS.ar[counted].text({ count: 3 } as never)).not.toContain('\u2068')
    expect(CATALOGS.ar[counted].text({ count: 3 } as never)).toContain(new Intl.NumberFormat('ar').format(3))
  })
})
