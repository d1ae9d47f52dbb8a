/** Issue 24 in-process (both engines): a client's ID-token algorithm — RS256 (the default), ES256 or EdDSA. */
import { describe, expect, test } from 'bun:test'
import * as jose from 'jose'
import { createClient, type Client } from '../../src/oauth/clients'
import { CALLBACK, ORIGIN, addUser, authorizeAndAllow, cookieHeader, createTestApp, form, postForm, signIn, type TestApp } from '../helpers'

type Made = { client: Client; secret: string }
const BYE = 'https://app.example/bye'

/** RP-initiated logout with a hint, confirmed in the browser's session: where it ends. */
async function logoutWith(w: Awaited<ReturnType<typeof world>>, hint: string): Promise<string | null> {
  const page = await w.t.handle(`/oauth/logout?${form({ id_token_hint: hint, post_logout_redirect_uri: BYE })}`, { headers: { cookie: cookieHeader(w.jar) } })
  const html = await page.text()
  const fields = Object.fromEntries([...html.matchAll(/name="([a-z_]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]))
  const res = await postForm(w.t, '/oauth/logout', fields, w.jar)
  w.jar = await signIn(w.t)
  return res.headers.get('location')
}

async function world() {
  const t = await createTestApp()
  const user = await addUser(t)
  const jar = await signIn(t)
  const make = async (name: string, idTokenAlg?: string) =>
    (await createClient(t.store, { name, redirectUris: [CALLBACK], postLogoutRedirectUris: [BYE], public: false, skipConsent: true, idTokenAlg }, t.clock.now())) as Made
  return { t, user, jar, make }
}

async function idTokenFor(w: Awaited<ReturnType<typeof world>>, app: Made, nonce = 'n-1'): Promise<{ id_token: string; refresh_token: string }> {
  const callback = await authorizeAndAllow(w.t, w.jar, { client_id: app.client.id, redirect_uri: CALLBACK, state: 's', scope: 'openid profile offline_access', nonce })
  const res = await w.t.handle('/api/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + btoa(`${app.client.id}:${app.secret}`) },
    body: form({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { id_token: string; refresh_token: string }
}

async function published(t: TestApp) {
  return ((await (await t.handle('/.well-known/jwks.json')).json()) as { keys: Array<Record<string, string>> }).keys
}

describe('ID tokens signed with the client’s algorithm', () => {
  test('RS256 by default; ES256 and EdDSA keys are made when a client first needs them, published, and verify with jose', async () => {
    const w = await world()
    const rs = await w.make('Classic')
    const es = await w.make('Elliptic', 'ES256')
    const ed = await w.make('Edwards', 'EdDSA')
    expect(rs.client.idTokenAlg).toBe('RS256')
    expect((await published(w.t)).map((k) => k.alg)).toEqual(['RS256', 'RS256'])

    for (const [app, alg, kty, crv] of [
      [rs, 'RS256', 'RSA', undefined],
      [es, 'ES256', 'EC', 'P-256'],
      [ed, 'EdDSA', 'OKP', 'Ed25519'],
    ] as const) {
      const { id_token } = await idTokenFor(w, app)
      const header = jose.decodeProtectedHeader(id_token)
      expect(header.alg).toBe(alg)
      const key = (await published(w.t)).find((k) => k.kid === header.kid)!
      expect(key).toMatchObject({ kty, alg, use: 'sig', ...(crv ? { crv } : {}) })
      // Only the public half is published.
      expect(Object.keys(key).some((k) => ['d', 'p', 'q', 'dp', 'dq', 'qi'].includes(k))).toBe(false)
      const jwks = jose.createLocalJWKSet({ keys: await published(w.t) } as jose.JSONWebKeySet)
      const { payload } = await jose.jwtVerify(id_token, jwks, { issuer: ORIGIN, audience: app.client.id, algorithms: [alg], currentDate: new Date(w.t.clock.now()) })
      expect(payload).toMatchObject({ sub: w.user.id, nonce: 'n-1', name: 'Ann Lee' })
    }
    // Each algorithm: a key that signs and a next one, published ahead of its turn.
    expect((await published(w.t)).map((k) => k.alg).sort()).toEqual(['ES256', 'ES256', 'EdDSA', 'EdDSA', 'RS256', 'RS256'])
  })

  test('a refresh signs with the same algorithm; an ES256 id_token is a valid id_token_hint at logout', async () => {
    const w = await world()
    const es = await w.make('Elliptic', 'ES256')
    const first = await idTokenFor(w, es)
    const refreshed = await w.t.handle('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + btoa(`${es.client.id}:${es.secret}`) },
      body: form({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
    })
    expect(refreshed.status).toBe(200)
    expect(jose.decodeProtectedHeader(((await refreshed.json()) as { id_token: string }).id_token).alg).toBe('ES256')
    expect(await logoutWith(w, first.id_token)).toBe(BYE)
    // A token whose header claims another algorithm than its key's is no hint: signed out, never redirected.
    const [, payload, signature] = first.id_token.split('.')
    const header = Buffer.from(JSON.stringify({ ...jose.decodeProtectedHeader(first.id_token), alg: 'RS256' })).toString('base64url')
    expect(await logoutWith(w, `${header}.${payload}.${signature}`)).toBeNull()
  })

  test('keys rotate together: each algorithm’s next key signs and a new one waits', async () => {
    const w = await world()
    const es = await w.make('Elliptic', 'ES256')
    const before = jose.decodeProtectedHeader((await idTokenFor(w, es)).id_token).kid
    w.t.clock.advance(10 * 60_000)
    const promoted = await w.t.ctx.signingKeys.rotate()
    expect(promoted.map((k) => k.alg)).toEqual(['RS256', 'ES256'])
    const after = jose.decodeProtectedHeader((await idTokenFor(w, es)).id_token).kid
    expect(after).toBe(promoted[1]!.kid)
    expect(after).not.toBe(before)
    // The RS256 signer is the RS256 key promoted, never the ES256 one.
    const rs = await w.make('Classic')
    expect(jose.decodeProtectedHeader((await idTokenFor(w, rs)).id_token).kid).toBe(promoted[0]!.kid)
    expect(await w.t.ctx.signingKeys.remove(promoted[1]!.kid)).toBe('signing')
  })

  test('an unknown algorithm is refused and nothing is stored', async () => {
    const w = await world()
    await expect(w.make('Nope', 'HS256')).rejects.toThrow('the ID-token algorithm must be one of RS256, ES256, EdDSA, got "HS256"')
    expect(await w.t.store.clients.listClients()).toEqual([])
  })
})
