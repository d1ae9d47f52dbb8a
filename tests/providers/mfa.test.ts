/**
 * SPEC "Sign in with another account": amr of such a sign-in is ["fed"]; --require-mfa apps ask
 * for Latchkey's own second factor unless the provider is created with --trust-mfa and its
 * id_token's amr contains mfa (then ["fed","mfa"]). Against a real oidc-provider.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { decodeJwt } from 'jose'
import { createClient } from '../../src/oauth/clients'
import { CALLBACK, addUser, authorizePath, signIn, tokenRequest, type TestApp } from '../helpers'
import { turnOnTotp, twoStep } from '../accounts/mfa-flows'
import { addProvider, appWith, browserFor, continueWith, sessionsOf, upstreamFor } from './flow'
import type { Upstream } from './upstream'

setDefaultTimeout(30_000)

let upstream: Upstream
beforeAll(async () => {
  upstream = await upstreamFor()
})
afterAll(() => upstream.close())

async function strictApp(t: TestApp) {
  return (await createClient(t.store, { name: 'Strict', redirectUris: [CALLBACK], public: false, skipConsent: true, requireMfa: true }, t.clock.now())) as { client: { id: string }; secret: string }
}

/** The id_token's amr for a code the app got at its callback. */
async function amrAt(t: TestApp, app: { client: { id: string }; secret: string }, callback: string) {
  const code = new URL(callback).searchParams.get('code')!
  const res = await tokenRequest(t, { grant_type: 'authorization_code', code, client_id: app.client.id, client_secret: app.secret, redirect_uri: CALLBACK })
  expect(res.status).toBe(200)
  return decodeJwt(((await res.json()) as { id_token: string }).id_token).amr
}

describe('--require-mfa apps', () => {
  test('--trust-mfa and the provider said mfa: the app gets amr ["fed","mfa"] without a second factor of Latchkey’s own', async () => {
    const t = await appWith([upstream])
    await addProvider(t, upstream, { allowCreate: true, trustMfa: true })
    const app = await strictApp(t)
    const authorize = authorizePath({ client_id: app.client.id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', state: 's' })
    const done = await continueWith(browserFor(t, [upstream]), upstream, 'u-new', { returnTo: authorize, amr: ['pwd', 'otp', 'mfa'] })
    expect(done.left!.startsWith(`${CALLBACK}?code=`)).toBe(true)
    expect(await amrAt(t, app, done.left!)).toEqual(['fed', 'mfa'])
  })

  test('without --trust-mfa, or when the provider did not say mfa, a one-factor ["fed"] session is asked for two-step', async () => {
    for (const [trustMfa, amr] of [
      [false, ['pwd', 'mfa']],
      [true, ['pwd']],
    ] as const) {
      const t = await appWith([upstream])
      await addProvider(t, upstream, { allowCreate: true, trustMfa })
      const app = await strictApp(t)
      const authorize = authorizePath({ client_id: app.client.id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', state: 's' })
      const done = await continueWith(browserFor(t, [upstream]), upstream, 'u-new', { returnTo: authorize, amr: [...amr] })
      expect(done.left).toBeUndefined()
      expect(done.response.status).toBe(200)
      expect(await done.response.text()).toContain('<h1>Two-step verification required</h1>')
      expect((await sessionsOf(t)).map((s) => s.amr)).toEqual(['fed'])
    }
  })

  test('a user with TOTP gives a code after the provider: the app gets ["fed","otp","mfa"]', async () => {
    const t = await appWith([upstream])
    const ann = await addUser(t)
    const { totp } = await turnOnTotp(t, await signIn(t))
    await t.rows('DELETE FROM sessions')
    await addProvider(t, upstream)
    const b = browserFor(t, [upstream])
    upstream.next.account = 'u-other'
    await t.store.providers.linkIdentity({ providerId: 'acme', subject: 'u-other', userId: ann.id, email: null, origin: { kind: 'oidc', issuer: upstream.issuer, apiUrl: null } }, t.clock.now())
    const app = await strictApp(t)
    const authorize = authorizePath({ client_id: app.client.id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', state: 's' })
    const first = await continueWith(b, upstream, 'u-other', { returnTo: authorize })
    expect(new URL(first.at).pathname).toBe('/login/two-step')
    expect(await sessionsOf(t)).toEqual([{ user: ann.id, amr: 'fed', pending: true }])
    const jar = b.latchkey
    t.clock.advance(30_000)
    const second = await twoStep(t, jar, { code: totp.generate({ timestamp: t.clock.now() }), return_to: authorize })
    expect([second.status, second.headers.get('location')]).toEqual([303, authorize])
    for (const [name, value] of Object.entries(jar)) b.jar('localhost:3000').set(name, value)
    const back = await b.go(authorize)
    expect(await amrAt(t, app, back.left!)).toEqual(['fed', 'otp', 'mfa'])
  })
})
