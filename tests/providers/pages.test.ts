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

test('sign-ins started from one address are bounded: 30 a minute, then 429 with Retry-After and no state row', async () => {
  const t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: 'sso.github.test' })
  // A github provider needs no discovery: its endpoints are fixed, so this counts starts alone.
  await createProvider(t.store, t.ctx.sealKey, { name: 'GitHub', kind: 'github', apiUrl: 'http://sso.github.test/api/v3', clientId: 'Iv1.x', clientSecret: 'x-secret' }, t.config.clientIdMetadataAllowHosts, t.clock.now())
  for (let i = 0; i < 30; i++) expect((await t.handle('/login/provider/github')).status).toBe(303)
  const refused = await t.handle('/login/provider/github')
  expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '60'])
  expect(await refused.text()).toContain('Too many sign-ins were started from your network. Try again in 60 seconds.')
  expect(await t.rows('SELECT state_hash FROM provider_states')).toHaveLength(30)
  t.clock.advance(60_000)
  expect((await t.handle('/login/provider/github')).status).toBe(303)
})

test('a provider that cannot be reached (nothing listens; a name that does not resolve) is a 502 page, nothing started; the reason is logged', async () => {
  const { capturingLogger } = await import('../helpers')
  const logger = capturingLogger()
  const t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: '127.0.0.1:9' }, { log: logger.log })
  await createProvider(t.store, t.ctx.sealKey, { id: 'down', name: 'Down', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'x-secret' }, t.config.clientIdMetadataAllowHosts, t.clock.now())
  // Fetched by the metadata fetcher: a name is resolved and each address checked before it connects.
  await createProvider(t.store, t.ctx.sealKey, { id: 'private', name: 'Private', issuer: 'https://localhost.localdomain.invalid', clientId: 'x', clientSecret: 'x-secret' }, [], t.clock.now())
  for (const id of ['down', 'private']) {
    const res = await t.handle(`/login/provider/${id}`)
    expect(res.status).toBe(502)
    expect(await res.text()).toContain('cannot be reached right now. Try again later, or sign in another way.')
  }
  expect(await t.rows('SELECT state_hash FROM provider_states')).toEqual([])
  const unreachable = logger.entries().filter((e) => e.msg === 'provider unreachable')
  expect(unreachable.map((e) => e.provider)).toEqual(['down', 'private'])
  expect(String(unreachable[0]!.reason)).toContain('http://127.0.0.1:9/.well-known/openid-configuration could not be fetched')
})
