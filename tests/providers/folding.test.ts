/**
 * SPEC "Sign in with another account", Linking: a provider vouches for the address it verified,
 * spelled as it is. Latchkey keeps one spelling per mailbox (NFKC, lower case: users.ts
 * normalizeEmail), so `ａnn@example.com` (a fullwidth a — another mailbox to a mail server, RFC
 * 6531) would become `ann@example.com`: such an address never links to or makes the account of the
 * address it folds into. Letter case alone is no other mailbox. In process, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { addUser } from '../helpers'
import { addProvider, appWith, browserFor, continueWith, failures, identitiesOf, sessionsOf, upstreamFor, verifyEmail } from './flow'
import type { Upstream } from './upstream'

setDefaultTimeout(30_000)

let upstream: Upstream
beforeAll(async () => {
  upstream = await upstreamFor()
  upstream.accounts.set('u-fullwidth-ann', { email: '\uff41nn@example.com', email_verified: true, name: 'Not Ann' })
  upstream.accounts.set('u-fullwidth-bob', { email: '\uff42ob@example.com', email_verified: true, name: 'Not Bob' })
  // A superscript a (U+00AA, NFKC: a).
  upstream.accounts.set('u-ordinal-ann', { email: '\u00aann@example.com', email_verified: true })
  upstream.accounts.set('u-upper-ann', { email: 'ANN@Example.COM', email_verified: true, name: 'Ann Upstream' })
})
afterAll(() => upstream.close())

const NOT_LINKED = 'No account here is connected to this Acme account.'

test('a verified address that only folds into a local verified address does not link to it', async () => {
  const t = await appWith([upstream])
  await addUser(t)
  await verifyEmail(t, 'ann@example.com')
  await addProvider(t, upstream, { linkVerifiedEmail: true, allowCreate: true })
  for (const account of ['u-fullwidth-ann', 'u-ordinal-ann']) {
    const refused = await continueWith(browserFor(t, [upstream]), upstream, account)
    expect(refused.response.status).toBe(403)
    expect(await refused.response.text()).toContain(NOT_LINKED)
  }
  expect(await identitiesOf(t)).toEqual([])
  expect(await sessionsOf(t)).toEqual([])
  expect((await failures(t)).map((f) => f.reason)).toEqual(['not-linked', 'not-linked'])
})

test('--allow-create makes no account for the address a provider address folds into', async () => {
  const t = await appWith([upstream])
  await addProvider(t, upstream, { allowCreate: true })
  const refused = await continueWith(browserFor(t, [upstream]), upstream, 'u-fullwidth-bob')
  expect(refused.response.status).toBe(403)
  expect(await t.rows('SELECT email FROM users')).toEqual([])
  expect(await identitiesOf(t)).toEqual([])
})

test('letter case alone still links: ANN@Example.COM verified is ann@example.com', async () => {
  const t = await appWith([upstream])
  const ann = await addUser(t)
  await verifyEmail(t, 'ann@example.com')
  await addProvider(t, upstream, { linkVerifiedEmail: true })
  const done = await continueWith(browserFor(t, [upstream]), upstream, 'u-upper-ann')
  expect(new URL(done.at).pathname).toBe('/account')
  expect(await identitiesOf(t)).toEqual([{ provider: 'acme', subject: 'u-upper-ann', user: ann.id, email: 'ann@example.com' }])
})
