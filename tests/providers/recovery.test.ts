/**
 * Account recovery (SPEC "Email", Recovery) and providers: an unverified account may have been set
 * up by anyone with its address (sign-up asks no proof), and whoever did may have connected a
 * provider account of their own from /account. When the address's owner takes the account back by
 * a reset link, that connection goes with every other way in — else the intruder signs in again
 * with "Continue with NAME" (a pre-account takeover). In process, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { addUser } from '../helpers'
import { SMTP, forgot, outboxOf, reset } from '../accounts/mail-flows'
import { addProvider, appWith, browserFor, continueWith, identitiesOf, passwordSignIn, sessionsOf, upstreamFor } from './flow'
import type { Upstream } from './upstream'

setDefaultTimeout(30_000)

let upstream: Upstream
beforeAll(async () => {
  upstream = await upstreamFor()
})
afterAll(() => upstream.close())

test("a reset link that recovers an unverified account removes the provider accounts connected to it, and lists them", async () => {
  const t = await appWith([upstream], SMTP)
  // An intruder signed up with Ann's address (not verified) and connects their own Acme account.
  const ann = await addUser(t)
  await addProvider(t, upstream)
  const intruder = browserFor(t, [upstream])
  await passwordSignIn(intruder)
  upstream.next.account = 'u-other'
  expect(new URL((await intruder.submit('/account', '/account/providers/acme/connect')).at).pathname).toBe('/account')
  expect(await identitiesOf(t)).toEqual([{ provider: 'acme', subject: 'u-other', user: ann.id, email: 'zed@elsewhere.example' }])

  // Ann, the address's owner, uses "Forgot password".
  await forgot(t, 'ann@example.com')
  const link = (await outboxOf(t, 2)).find((m) => m.subject === 'Reset your password')!.link!
  const done = await reset(t, link, 'the owner is back now')
  expect(done.status).toBe(200)
  const html = await done.text()
  expect(html).toContain('Everything set up on it before was removed:')
  expect(html).toContain('<li>Sign-in with Acme as zed@elsewhere.example</li>')
  expect(await identitiesOf(t)).toEqual([])
  expect(await sessionsOf(t)).toEqual([])

  // The intruder's Acme account no longer signs in to Ann's account.
  const again = await continueWith(browserFor(t, [upstream]), upstream, 'u-other')
  expect(again.response.status).toBe(403)
  expect(await again.response.text()).toContain('No account here is connected to this Acme account.')
  expect(await sessionsOf(t)).toEqual([])
})

test('a reset link on a verified account is no recovery: its connected provider accounts stay', async () => {
  const t = await appWith([upstream], SMTP)
  const ann = await addUser(t)
  await t.rows('UPDATE users SET email_verified = (1 = 1) WHERE id = ?', ann.id)
  await addProvider(t, upstream)
  const b = browserFor(t, [upstream])
  await passwordSignIn(b)
  upstream.next.account = 'u-ann'
  await b.submit('/account', '/account/providers/acme/connect')
  await forgot(t, 'ann@example.com')
  const link = (await outboxOf(t, 2)).find((m) => m.subject === 'Reset your password')!.link!
  expect((await reset(t, link, 'a new password of mine')).status).toBe(200)
  expect(await identitiesOf(t)).toEqual([{ provider: 'acme', subject: 'u-ann', user: ann.id, email: 'ann@example.com' }])
})
