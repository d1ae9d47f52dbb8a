/** Issue 8, item 6: one mailbox, one account; names and emails carry no control or invisible characters. */
import { describe, expect, test } from 'bun:test'
import { normalizeEmail } from '../../src/accounts/users'
import { PASSWORD, addUser, cookiesFrom, createTestApp, csrfFrom, postForm, type TestApp } from '../helpers'

async function signUp(t: TestApp, fullName: string, email: string) {
  const page = await t.handle('/signup')
  const jar = cookiesFrom(page)
  return postForm(t, '/signup', { full_name: fullName, email, password: PASSWORD, csrf_token: csrfFrom(await page.text()) }, jar)
}

describe('look-alike identities', () => {
  test('NFD, fullwidth and upper-case spellings of a taken email are the same account (409)', async () => {
    const t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '100', SIGNUP: 'open' })
    await addUser(t, 'zoë@example.com', 'Zoë')
    for (const variant of ['zoe\u0308@example.com', 'ｚｏë@ｅxample.com', ' ZOË@EXAMPLE.COM ']) {
      const res = await signUp(t, 'Someone', variant)
      expect(res.status).toBe(409)
      expect(await res.text()).toContain('An account with this email already exists.')
    }
    expect((await t.row('SELECT CAST(count(*) AS INTEGER) AS n FROM users'))).toEqual({ n: 1 })
  })

  test('emails and names with control or invisible characters are refused (400), nothing made', async () => {
    const t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '100', SIGNUP: 'open' })
    const cases: Array<[string, string, string]> = [
      ['Ann', 'ann\u200b@example.com', 'Email address contains control or invisible characters.'],
      ['Ann', 'ann\u0000@example.com', 'Email address contains control or invisible characters.'],
      ['Ann\u001b[31m', 'ann@example.com', 'Full name contains control or invisible characters.'],
      ['An\u200dn', 'ann@example.com', 'Full name contains control or invisible characters.'],
      ['Ann\u0000', 'ann@example.com', 'Full name contains control or invisible characters.'],
      ['Ann\u2028Lee', 'ann@example.com', 'Full name contains control or invisible characters.'],
      ['Ann', `${'a'.repeat(250)}@example.com`, 'Email address is not valid.'],
      // Default-ignorable code points that are not Cc or Cf: each renders as nothing (issue 18 item 5).
      ...['\u034f', '\ufe0f', '\u{e0100}', '\u3164', '\u115f', '\u1160', '\uffa0'].flatMap((c): Array<[string, string, string]> => [
        ['Ann', `alice${c}@example.com`, 'Email address contains control or invisible characters.'],
        [`An${c}n`, 'ann@example.com', 'Full name contains control or invisible characters.'],
      ]),
    ]
    for (const [name, email, message] of cases) {
      const res = await signUp(t, name, email)
      expect(res.status).toBe(400)
      expect(await res.text()).toContain(message)
    }
    expect((await t.row('SELECT CAST(count(*) AS INTEGER) AS n FROM users'))).toEqual({ n: 0 })
  })

  test('a name in NFD is stored in NFC; sign-in finds an account by any spelling of its email', async () => {
    const t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '100', SIGNUP: 'open' })
    expect((await signUp(t, 'Zoe\u0308', 'ZOË@example.com')).status).toBe(303)
    expect((await t.row('SELECT full_name, email FROM users'))).toEqual({ full_name: 'Zoë', email: 'zoë@example.com' })
    const page = await t.handle('/login')
    const res = await postForm(t, '/login', { email: 'ｚoe\u0308@example.com', password: PASSWORD, csrf_token: csrfFrom(await page.text()) }, cookiesFrom(page))
    expect(res.status).toBe(303)
  })

  test('normalizeEmail: at most 254 characters, and bounded work before normalizing', () => {
    expect(normalizeEmail(`${'a'.repeat(242)}@example.com`)).toHaveLength(254)
    expect(() => normalizeEmail(`${'a'.repeat(243)}@example.com`)).toThrow('email address is not valid')
    expect(() => normalizeEmail('x'.repeat(1_000_000))).toThrow('email address is not valid')
  })
})
