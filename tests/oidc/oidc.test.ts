/** Issue 11 in-process (both engines): OpenID Connect discovery, ID tokens, prompts, keys, RP-initiated logout. */
import { describe, expect, test } from 'bun:test'
import * as jose from 'jose'
import { insertUser } from '../../src/accounts/users'
import { hashPassword } from '../../src/lib/crypto'
import type { SigningKeyRecord } from '../../src/db/store'
import {
  CALLBACK,
  ORIGIN,
  PASSWORD,
  addClient,
  authorizeAndAllow,
  authorizePath,
  bearer,
  cookieHeader,
  cookiesFrom,
  createTestApp,
  csrfFrom,
  form,
  postForm,
  signIn,
  type TestApp,
} from '../helpers'

type Tokens = { access_token: string; refresh_token: string; id_token?: string; scope: string }

async function world(opts: { verified?: boolean; postLogout?: string[] } = {}) {
  const t = await createTestApp()
  const app = await createClientWith(t, opts.postLogout ?? ['https://app.example/bye'])
  const other = await addClient(t, { name: 'Other' })
  const user = await insertUser(t.store, { email: 'ann@example.com', fullName: 'Ann Lee', avatarUrl: null, passwordHash: await hashPassword(PASSWORD), emailVerified: opts.verified ?? false }, t.clock.now())
  const jar = await signIn(t)
  return { t, app, other, user, jar }
}

async function createClientWith(t: TestApp, postLogoutRedirectUris: string[]) {
  const { createClient } = await import('../../src/oauth/clients')
  return (await createClient(t.store, { name: 'OIDC App', redirectUris: [CALLBACK], postLogoutRedirectUris, public: false, skipConsent: false }, t.clock.now())) as {
    client: { id: string }
    secret: string
  }
}

const basic = (c: { client: { id: string }; secret: string }) => 'Basic ' + btoa(`${c.client.id}:${c.secret}`)

async function tokensFor(w: Awaited<ReturnType<typeof world>>, params: Record<string, string>) {
  const callback = await authorizeAndAllow(w.t, w.jar, { client_id: w.app.client.id, redirect_uri: CALLBACK, state: 's', ...params })
  const res = await w.t.handle('/api/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(w.app) },
    body: form({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as Tokens
}

async function jwks(t: TestApp) {
  return jose.createLocalJWKSet((await (await t.handle('/.well-known/jwks.json')).json()) as jose.JSONWebKeySet)
}

describe('discovery and the JWKS', () => {
  test('/.well-known/openid-configuration names the endpoints, RS256, S256, the scopes and claims', async () => {
    const t = await createTestApp()
    const res = await t.handle('/.well-known/openid-configuration')
    expect(res.status).toBe(200)
    const doc = (await res.json()) as Record<string, unknown>
    expect(doc).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/api/oauth/token`,
      userinfo_endpoint: `${ORIGIN}/api/oauth/userinfo`,
      introspection_endpoint: `${ORIGIN}/api/oauth/introspect`,
      revocation_endpoint: `${ORIGIN}/api/oauth/revoke`,
      end_session_endpoint: `${ORIGIN}/oauth/logout`,
      jwks_uri: `${ORIGIN}/.well-known/jwks.json`,
      pushed_authorization_request_endpoint: `${ORIGIN}/api/oauth/par`,
      device_authorization_endpoint: `${ORIGIN}/api/oauth/device_authorization`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'],
    })
    expect(doc.scopes_supported).toEqual(['openid', 'profile', 'email', 'groups', 'settings:read', 'settings:write', 'offline_access'])
    expect(doc.claims_supported).toContain('email_verified')
  })

  test('the JWKS publishes the RS256 public key with kid, use and alg, cacheable for less than a key outlives its retirement', async () => {
    const t = await createTestApp()
    const res = await t.handle('/.well-known/jwks.json')
    expect(res.headers.get('cache-control')).toBe('public, max-age=300')
    const { keys } = (await res.json()) as { keys: Array<Record<string, string>> }
    // The key that signs, and the next one, published before it signs.
    expect(keys).toHaveLength(2)
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
      expect(key).toMatchObject({ kty: 'RSA', use: 'sig', alg: 'RS256' })
    }
  })
})

describe('ID tokens', () => {
  test('with openid the exchange returns an RS256 id_token: iss, sub, aud, exp, iat, auth_time, amr, nonce, and the scopes\' claims', async () => {
    const w = await world({ verified: true })
    const authTime = Math.floor(w.t.clock.now() / 1000)
    const tokens = await tokensFor(w, { scope: 'openid profile email', nonce: 'n-0S6_WzA2Mj' })
    const { payload, protectedHeader } = await jose.jwtVerify(tokens.id_token!, await jwks(w.t), { issuer: ORIGIN, audience: w.app.client.id, currentDate: new Date(w.t.clock.now()) })
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT' })
    expect(protectedHeader.kid).toBeString()
    expect(payload).toEqual({
      iss: ORIGIN,
      sub: w.user.id,
      aud: w.app.client.id,
      exp: authTime + 3600,
      iat: authTime,
      auth_time: authTime,
      amr: ['pwd'],
      nonce: 'n-0S6_WzA2Mj',
      email: 'ann@example.com',
      email_verified: true,
      name: 'Ann Lee',
      picture: `${ORIGIN}/avatars/${w.user.id}.svg`,
      // Back-Channel Logout §2.4: the sign-in session (tests/oidc/backchannel-logout.test.ts).
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    })
  })

  test('claims follow the scopes; a self-registered email is not verified; without openid there is no id_token', async () => {
    const w = await world()
    const emailOnly = await tokensFor(w, { scope: 'openid email' })
    const claims = jose.decodeJwt(emailOnly.id_token!)
    expect(claims).toMatchObject({ email: 'ann@example.com', email_verified: false })
    expect(claims.name).toBeUndefined()
    expect(claims.nonce).toBeUndefined()
    const plain = await tokensFor(w, { scope: 'email' })
    expect(plain.id_token).toBeUndefined()
  })

  test('userinfo: the seed\'s fields without openid; with openid also sub, email_verified, name, picture', async () => {
    const w = await world()
    const seed = await tokensFor(w, { scope: 'profile email' })
    expect(Object.keys((await (await w.t.handle('/api/oauth/userinfo', { headers: bearer(seed.access_token) })).json()) as object).sort()).toEqual(['avatar_url', 'email', 'full_name', 'id'])
    const oidc = await tokensFor(w, { scope: 'openid profile email' })
    expect(await (await w.t.handle('/api/oauth/userinfo', { headers: bearer(oidc.access_token) })).json()).toEqual({
      id: w.user.id,
      sub: w.user.id,
      email: 'ann@example.com',
      email_verified: false,
      full_name: 'Ann Lee',
      avatar_url: `${ORIGIN}/avatars/${w.user.id}.svg`,
      name: 'Ann Lee',
      picture: `${ORIGIN}/avatars/${w.user.id}.svg`,
    })
    const onlyOpenid = await tokensFor(w, { scope: 'openid' })
    expect(await (await w.t.handle('/api/oauth/userinfo', { headers: bearer(onlyOpenid.access_token) })).json()).toEqual({ id: w.user.id, sub: w.user.id })
  })

  test('a refresh returns a new id_token with the original auth_time and no nonce', async () => {
    const w = await world()
    const first = await tokensFor(w, { scope: 'openid email offline_access', nonce: 'abc' })
    const authTime = jose.decodeJwt(first.id_token!).auth_time
    w.t.clock.advance(600_000)
    const res = await w.t.handle('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(w.app) },
      body: form({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
    })
    const next = (await res.json()) as Tokens
    expect(next.scope).toBe('openid email offline_access')
    const claims = jose.decodeJwt(next.id_token!)
    expect(claims.auth_time).toBe(authTime)
    expect(claims.nonce).toBeUndefined()
    expect(claims.iat).toBe(Math.floor(w.t.clock.now() / 1000))
  })

  test('a nonce over 512 characters → invalid_request', async () => {
    const w = await world()
    const res = await w.t.handle(authorizePath({ client_id: w.app.client.id, redirect_uri: CALLBACK, scope: 'openid', nonce: 'n'.repeat(513), state: 's' }), { headers: { cookie: cookieHeader(w.jar) } })
    const location = new URL(res.headers.get('location')!)
    expect([location.searchParams.get('error'), location.searchParams.get('state')]).toEqual(['invalid_request', 's'])
  })
})

describe('prompt and max_age', () => {
  const authorize = (w: Awaited<ReturnType<typeof world>>, params: Record<string, string>, jar: Record<string, string> | null = w.jar) =>
    w.t.handle(authorizePath({ client_id: w.app.client.id, redirect_uri: CALLBACK, scope: 'openid email', state: 'st', ...params }), jar ? { headers: { cookie: cookieHeader(jar) } } : {})
  const redirectOf = (res: Response) => new URL(res.headers.get('location')!)

  test('prompt=none: not signed in → login_required; no consent yet → consent_required; remembered → a code', async () => {
    const w = await world()
    const anon = redirectOf(await authorize(w, { prompt: 'none' }, null))
    expect([anon.origin + anon.pathname, anon.searchParams.get('error'), anon.searchParams.get('state'), anon.searchParams.get('iss')]).toEqual([CALLBACK, 'login_required', 'st', ORIGIN])
    const noConsent = redirectOf(await authorize(w, { prompt: 'none' }))
    expect(noConsent.searchParams.get('error')).toBe('consent_required')
    await tokensFor(w, { scope: 'openid email' })
    const silent = redirectOf(await authorize(w, { prompt: 'none' }))
    expect(silent.searchParams.get('code')).toBeString()
  })

  test('unknown prompt values, or none with another → invalid_request', async () => {
    const w = await world()
    for (const prompt of ['bogus', 'none login', 'consent create']) expect(redirectOf(await authorize(w, { prompt })).searchParams.get('error')).toBe('invalid_request')
  })

  test('prompt=consent shows the consent page even when consent is remembered', async () => {
    const w = await world()
    await tokensFor(w, { scope: 'openid email' })
    const res = await authorize(w, { prompt: 'consent' })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('>Allow</button>')
  })

  test('login_after from the request is not trusted: 0, a forged or an old marker still asks for the sign-in (issue 18 item 6)', async () => {
    for (const params of [{ prompt: 'login' }, { max_age: '0' }] as Array<Record<string, string>>) {
      const w = await world()
      await tokensFor(w, { scope: 'openid email' })
      w.t.clock.advance(60_000)
      // The marker Latchkey itself issues, for this client, a minute ago.
      const issued = new URL((await authorize(w, params)).headers.get('location')!, 'http://x').searchParams.get('return_to')!
      const marker = new URL(issued, 'http://x').searchParams.get('login_after')!
      expect(marker).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/)
      for (const loginAfter of ['0', String(w.t.clock.now() - 1), `${marker.split('.')[0]}.${'A'.repeat(43)}`]) {
        const res = await authorize(w, { ...params, login_after: loginAfter })
        expect([loginAfter, res.status]).toEqual([loginAfter, 303])
        expect(res.headers.get('location')!).toStartWith('/login?return_to=')
      }
      // Past its 15 minutes the genuine marker is ignored too.
      w.t.clock.advance(15 * 60_000 + 1)
      expect((await authorize(w, { ...params, login_after: marker })).headers.get('location')!).toStartWith('/login?return_to=')
    }
  })

  test('prompt=login and max_age=0 send a signed-in user to sign in again, once; auth_time is the new sign-in', async () => {
    for (const params of [{ prompt: 'login' }, { max_age: '0' }] as Array<Record<string, string>>) {
      const w = await world()
      await tokensFor(w, { scope: 'openid email' })
      w.t.clock.advance(60_000)
      const res = await authorize(w, params)
      expect(res.status).toBe(303)
      const login = res.headers.get('location')!
      expect(login).toStartWith('/login?return_to=')
      expect(login).toEndWith('&reauth=1')
      // The sign-in page shows even though a session exists, and signing in goes back.
      const page = await w.t.handle(login, { headers: { cookie: cookieHeader(w.jar) } })
      expect(page.status).toBe(200)
      const html = await page.text()
      const returnTo = /name="return_to" value="([^"]+)"/.exec(html)![1]!.replaceAll('&amp;', '&')
      expect(returnTo).not.toContain('prompt=login')
      const signedIn = await postForm(w.t, '/login', { email: 'ann@example.com', password: PASSWORD, csrf_token: csrfFrom(html), return_to: returnTo }, w.jar)
      const jar = cookiesFrom(signedIn, { ...w.jar })
      const back = await w.t.handle(signedIn.headers.get('location')!, { headers: { cookie: cookieHeader(jar) } })
      const code = redirectOf(back).searchParams.get('code')
      expect(code).toBeString()
      const token = (await (
        await w.t.handle('/api/oauth/token', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(w.app) },
          body: form({ grant_type: 'authorization_code', code: code!, redirect_uri: CALLBACK }),
        })
      ).json()) as Tokens
      expect(jose.decodeJwt(token.id_token!).auth_time).toBe(Math.floor(w.t.clock.now() / 1000))
    }
  })

  test('max_age within the session\'s age needs no new sign-in', async () => {
    const w = await world()
    await tokensFor(w, { scope: 'openid email' })
    w.t.clock.advance(30_000)
    expect(redirectOf(await authorize(w, { max_age: '3600' })).searchParams.get('code')).toBeString()
  })
})

describe('signing keys', () => {
  test('rotation: the next key, published since start, signs only once relying parties can have fetched it; the retired one verifies until its tokens expire, then goes', async () => {
    const w = await world()
    const before = await tokensFor(w, { scope: 'openid' })
    const oldKid = jose.decodeProtectedHeader(before.id_token!).kid!
    const publishedAtStart = ((await (await w.t.handle('/.well-known/jwks.json')).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid)
    const [rotated] = (await w.t.ctx.signingKeys.rotate()) as [SigningKeyRecord]
    // The promoted key is the one published since start (the test app started a moment ago).
    expect(publishedAtStart).toEqual(expect.arrayContaining([oldKid, rotated.kid]))
    expect(rotated.signsFrom).toBe(w.t.clock.now() + 360_000)
    expect(jose.decodeProtectedHeader((await tokensFor(w, { scope: 'openid' })).id_token!).kid).toBe(oldKid)
    w.t.clock.advance(360_000)
    const after = await tokensFor(w, { scope: 'openid' })
    expect(jose.decodeProtectedHeader(after.id_token!).kid).toBe(rotated.kid)
    const keys = await jwks(w.t)
    const options = { issuer: ORIGIN, audience: w.app.client.id, currentDate: new Date(w.t.clock.now()) }
    expect((await jose.jwtVerify(after.id_token!, keys, options)).payload.sub).toBe(w.user.id)
    expect((await jose.jwtVerify(before.id_token!, keys, { ...options, currentDate: new Date(w.t.clock.now() - 360_000) })).payload.sub).toBe(w.user.id)
    expect((await w.t.ctx.signingKeys.verifier())(oldKid)).toBeDefined()
    // Once every token the old key signed has expired, it is neither published nor trusted, and the purge deletes it.
    w.t.clock.advance(3600_000 + 1)
    const published = ((await (await w.t.handle('/.well-known/jwks.json')).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid)
    expect(published).toHaveLength(2)
    expect(published).toContain(rotated.kid)
    expect(published).not.toContain(oldKid)
    expect((await w.t.ctx.signingKeys.verifier())(oldKid)).toBeUndefined()
    await w.t.store.purgeExpired(w.t.clock.now(), { usedCodes: 3600_000, throttle: 3600_000, refreshGrace: 10_000, retiredKeys: 3600_000, mail: 7 * 24 * 3600_000, settingChanges: 30 * 86_400_000 })
    expect((await w.t.store.keys.listSigningKeys()).map((k) => k.kid)).not.toContain(oldKid)
  })

  test('a rotation once the next key has been published long enough signs with it at once; remove refuses the signing key', async () => {
    const w = await world()
    w.t.clock.advance(10 * 60_000)
    const [rotated] = (await w.t.ctx.signingKeys.rotate()) as [SigningKeyRecord]
    expect(rotated.signsFrom).toBe(w.t.clock.now())
    expect(jose.decodeProtectedHeader((await tokensFor(w, { scope: 'openid' })).id_token!).kid).toBe(rotated.kid)
    const keys = await w.t.store.keys.listSigningKeys()
    expect(keys).toHaveLength(3) // the signing key, the new next key, the retired one
    const next = keys.find((k) => k.signsFrom === null)!
    const retired = keys.find((k) => k.retiredAt !== null)!
    expect(await w.t.ctx.signingKeys.remove(rotated.kid)).toBe('signing')
    expect(await w.t.ctx.signingKeys.remove('no-such-kid')).toBe('unknown')
    expect(await w.t.ctx.signingKeys.remove(retired.kid)).toBe('removed')
    expect((await w.t.ctx.signingKeys.verifier())(retired.kid)).toBeUndefined()
    expect(await w.t.ctx.signingKeys.remove(next.kid)).toBe('removed')
    expect((await w.t.store.keys.listSigningKeys()).map((k) => k.kid)).toEqual([rotated.kid])
  })
})

describe('RP-initiated logout', () => {
  async function confirm(w: Awaited<ReturnType<typeof world>>, params: Record<string, string>) {
    const page = await w.t.handle(`/oauth/logout?${form(params)}`, { headers: { cookie: cookieHeader(w.jar) } })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('>Sign out</button>')
    const fields = Object.fromEntries([...html.matchAll(/name="([a-z_]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]))
    return postForm(w.t, '/oauth/logout', fields, w.jar)
  }

  test('a verified id_token_hint and a registered post_logout_redirect_uri: confirm, the session ends, 303 there with state', async () => {
    const w = await world()
    const { id_token } = await tokensFor(w, { scope: 'openid' })
    const res = await confirm(w, { id_token_hint: id_token!, post_logout_redirect_uri: 'https://app.example/bye', state: 'x&y' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('https://app.example/bye?state=x%26y')
    expect((await w.t.handle('/account', { headers: { cookie: cookieHeader(w.jar) } })).status).toBe(303)
  })

  test('client_id instead of a hint works the same', async () => {
    const w = await world()
    const res = await confirm(w, { client_id: w.app.client.id, post_logout_redirect_uri: 'https://app.example/bye' })
    expect(res.headers.get('location')).toBe('https://app.example/bye')
  })

  test('an unregistered uri, a hint that does not verify or names another client: signed out, but never a redirect', async () => {
    const w = await world()
    const { id_token } = await tokensFor(w, { scope: 'openid' })
    const forged = id_token!.slice(0, -4) + (id_token!.endsWith('AAAA') ? 'BBBB' : 'AAAA')
    const cases: Array<Record<string, string>> = [
      { id_token_hint: id_token!, post_logout_redirect_uri: 'https://evil.example/' },
      { id_token_hint: forged, post_logout_redirect_uri: 'https://app.example/bye' },
      { id_token_hint: id_token!, client_id: w.other.client.id, post_logout_redirect_uri: 'https://app.example/bye' },
      { client_id: w.other.client.id, post_logout_redirect_uri: 'https://app.example/bye' },
    ]
    for (const params of cases) {
      w.jar = await signIn(w.t)
      const res = await confirm(w, params)
      expect(res.status).toBe(200)
      expect(res.headers.get('location')).toBeNull()
      expect(await res.text()).toContain('You are signed out')
      expect((await w.t.handle('/account', { headers: { cookie: cookieHeader(w.jar) } })).status).toBe(303)
    }
  })

  test('logout without its CSRF token → 403 and the session stays', async () => {
    const w = await world()
    const res = await postForm(w.t, '/oauth/logout', { client_id: w.app.client.id, post_logout_redirect_uri: 'https://app.example/bye' }, w.jar)
    expect(res.status).toBe(403)
    expect((await w.t.handle('/account', { headers: { cookie: cookieHeader(w.jar) } })).status).toBe(200)
  })

  test('not signed in: a valid return goes back at once; anything else is the signed-out page', async () => {
    const w = await world()
    const direct = await w.t.handle(`/oauth/logout?${form({ client_id: w.app.client.id, post_logout_redirect_uri: 'https://app.example/bye', state: 's' })}`)
    expect(direct.headers.get('location')).toBe('https://app.example/bye?state=s')
    const page = await w.t.handle(`/oauth/logout?${form({ post_logout_redirect_uri: 'https://evil.example/' })}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('location')).toBeNull()
  })
})
