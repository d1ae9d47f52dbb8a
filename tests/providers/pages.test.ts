import { expect, test } from 'bun:test'
import { createProvider } from '../../src/providers/service'
import { createTestApp } from '../helpers'

test('"Continue with NAME" on /login and /signup keeps where the sign-in returns to; an unknown provider is 404', async () => {
  const t = await createTestApp({ SIGNUP: 'open' })
  expect(await (await t.handle('/login')).text()).not.toContain('Continue with')
  await createProvider(t.store, t.ctx.sealKey, { name: 'Acme & Co', id: 'acme', issuer: 'https://sso.acme.example', clientId: 'latchkey', clientSecret: 'x-secret' }, [], t.clock.now())
  const returnTo = '/oauth/authorize?client_id=abc&state=x y'
  const login = await (await t.handle(`/login?return_to=${encodeURIComponent(returnTo)}`)).text()
  expect(login).toContain('<a class="button secondary" href="/login/provider/acme?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dabc%26state%3Dx%2520y">Continue with Acme &amp; Co</a>')
  const signup = await (await t.handle('/signup')).text()
  expect(signup).toContain('<a class="button secondary" href="/login/provider/acme">Continue with Acme &amp; Co</a>')
  const missing = await t.handle('/login/provider/nobody')
  expect(missing.status).toBe(404)
  expect(await t.rows('SELECT state_hash FROM provider_states')).toEqual([])
})
