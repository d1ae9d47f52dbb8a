import { describe, expect, test } from 'bun:test'
import { formatTime, raw, speaking, speech, t, th } from '../../src/i18n'
import { SOURCES } from '../../src/i18n/catalog'

/** The compiled catalog: placeholders, escaping, plural forms by CLDR category, times with their zone. */
describe('messages', () => {
  test('placeholders filled; th escapes the text and string values, raw() markup passes as it is', () => {
    expect(t('signIn.noAccount', { link: '<a>' })).toBe('No account? <a>')
    expect(th('signIn.noAccount', { link: '<b>&' })).toBe('No account? &lt;b&gt;&amp;')
    expect(th('signIn.noAccount', { link: raw('<a href="/signup">Create account</a>') })).toBe('No account? <a href="/signup">Create account</a>')
    expect(th('signIn.continueTo', { app: raw(`<strong>${Bun.escapeHTML('<script>')}</strong>`) })).toBe('to continue to <strong>&lt;script&gt;</strong>')
  })

  test('speaking() sets the language of what runs inside it, and restores the one before', () => {
    expect(t('signIn.title')).toBe('Sign in')
    const inside = speaking(speech('de'), () => [t('signIn.title'), speaking(speech('en'), () => t('signIn.title')), t('signIn.title')])
    expect(inside).toEqual(['Anmelden', 'Sign in', 'Anmelden'])
    expect(t('signIn.title')).toBe('Sign in')
    expect(() => speaking(speech('de'), () => { throw new Error('x') })).toThrow('x')
    expect(t('signIn.title')).toBe('Sign in')
  })

  test('plural forms by CLDR category, numbers in the language\'s digits and separators', () => {
    expect([1, 2, 1000].map((count) => t('account.tooMany', { count }))).toEqual([
      'Too many attempts. Try again in 1 second.',
      'Too many attempts. Try again in 2 seconds.',
      'Too many attempts. Try again in 1,000 seconds.',
    ])
    expect(speaking(speech('de'), () => [1, 5, 1000].map((count) => t('security.codesLeft', { count })))).toEqual([
      '1 Wiederherstellungscode übrig.',
      '5 Wiederherstellungscodes übrig.',
      '1.000 Wiederherstellungscodes übrig.',
    ])
    // Polish picks one / few / many.
    expect(speaking(speech('pl'), () => [1, 3, 5, 22].map((count) => t('security.codesLeft', { count })))).toEqual([
      'Pozostał 1 kod odzyskiwania.',
      'Pozostały 3 kody odzyskiwania.',
      'Pozostało 5 kodów odzyskiwania.',
      'Pozostały 22 kody odzyskiwania.',
    ])
  })

  test('an Arabic speech is right to left and speaks its own words', () => {
    const s = speech('ar')
    expect([s.locale, s.dir]).toEqual(['ar', 'rtl'])
    expect(speaking(s, () => t('signIn.title'))).toBe((SOURCES.ar as Record<string, string>)['signIn.title']!)
    expect(speaking(s, () => t('signIn.title'))).not.toBe('Sign in')
  })

  test('times through Intl with the zone named: ISO order in English, the language\'s own elsewhere, the day in the reader\'s zone', () => {
    const at = Date.UTC(2026, 0, 1, 23, 30, 5)
    expect(formatTime(at, 'minute', speech('en'))).toBe('2026-01-01 23:30 UTC')
    expect(formatTime(at, 'second', speech('en', 'Europe/Berlin'))).toBe('2026-01-02 00:30:05 GMT+1')
    expect(formatTime(at, 'date', speech('en', 'Europe/Berlin'))).toBe('2026-01-02')
    expect(formatTime(at, 'minute', speech('de', 'Europe/Berlin'))).toBe('2. Jan. 2026, 00:30 MEZ')
    expect(formatTime(at, 'minute', speech('ja', 'Asia/Tokyo'))).toBe('2026年1月2日 08:30 JST')
  })
})
