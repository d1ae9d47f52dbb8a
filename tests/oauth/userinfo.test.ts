import { beforeEach, describe, expect, test } from 'bun:test'
import { ORIGIN, addClient, addUser, bearer, cookieHeader, createTestApp, signIn, tokenThroughFlow, type TestApp } from '../helpers'

let t: TestApp
let client: Awaited<ReturnType<typeof addClient>>
let userId: string

beforeEach(async () => {
  t = await createTestApp()
  client = await addClient(t)
  userId = (await addUser(t)).id
})

const userinfo = (headers: Record<string, string> = {}) => t.handle('/api/oauth/userinfo', { headers })

describe('GET /api/oauth/userinfo: fields per granted scope', () => {
  test('profile email → id, email, full_name, avatar_url', async () => {
    const token = await tokenThroughFlow(t, client, 'profile email')
    const res = await userinfo(bearer(token))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ id: userId, email: 'ann@example.com', full_name: 'Ann Lee', avatar_url: `${ORIGIN}/avatars/${userId}.svg` })
  })

  test('email only → id and email; profile keys absent, not null', async () => {
    const body = (await (await userinfo(bearer(await tokenThroughFlow(t, client, 'email')))).json()) as object
    expect(body).toEqual({ id: userId, email: 'ann@example.com' })
    expect(Object.keys(body).sort()).toEqual(['email', 'id'])
  })

  test('profile only → id, full_name, avatar_url; no email key', async () => {
    const body = (await (await userinfo(bearer(await tokenThroughFlow(t, client, 'profile')))).json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['avatar_url', 'full_name', 'id'])
  })

  test('settings scopes only → just id', async () => {
    expect(await (await userinfo(bearer(await tokenThroughFlow(t, client, 'settings:read')))).json()).toEqual({ id: userId })
  })

  test('the generated avatar is an SVG of the initials, for a token with profile', async () => {
    const res = await t.handle(`/avatars/${userId}.svg`, { headers: bearer(await tokenThroughFlow(t, client, 'profile')) })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/svg+xml')
    expect(res.headers.get('cache-control')).toBe('private, max-age=3600')
    expect(await res.text()).toContain('>AL</text>')
  })

  test('the avatar needs a signed-in session or a token with profile (issue 18 item 11)', async () => {
    const path = `/avatars/${userId}.svg`
    expect((await t.handle(path)).status).toBe(401)
    expect((await t.handle(path, { headers: bearer(await tokenThroughFlow(t, client, 'email')) })).status).toBe(401)
    expect((await t.handle(path, { headers: bearer('lk_at_1.' + 'a'.repeat(43)) })).status).toBe(401)
    const jar = await signIn(t)
    const withSession = await t.handle(path, { headers: { cookie: cookieHeader(jar) } })
    expect(withSession.status).toBe(200)
    expect(await withSession.text()).toContain('>AL</text>')
  })
})

describe('Bearer protection (RFC 6750)', () => {
  async function expect401(res: Response, header: string) {
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(header)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_token')
  }

  test('no Authorization header → 401 invalid_token, bare Bearer challenge', async () =>
    expect401(await userinfo(), 'Bearer realm="latchkey", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"'))
  test('another scheme → 401 invalid_token, bare challenge', async () =>
    expect401(await userinfo({ authorization: 'Basic abc' }), 'Bearer realm="latchkey", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"'))
  test('unknown token → 401 with error="invalid_token"', async () =>
    expect401(await userinfo(bearer('lk_at_nope')), 'Bearer realm="latchkey", error="invalid_token", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"'))

  test('a real token id with a wrong verifier, or a malformed token → 401 invalid_token', async () => {
    const token = await tokenThroughFlow(t, client, 'email')
    const [selector, verifier] = token.split('.') as [string, string]
    const wrong = verifier.slice(0, -1) + (verifier.endsWith('A') ? 'B' : 'A')
    for (const bad of [`${selector}.${wrong}`, `${selector}.`, selector, `${selector}.${verifier}x`, token.toUpperCase(), `lk_at_zzzzzzzzzzzzz.${verifier}`])
      await expect401(await userinfo(bearer(bad)), 'Bearer realm="latchkey", error="invalid_token", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"')
    expect((await userinfo(bearer(token))).status).toBe(200)
  })

  test('expired token → 401 with error="invalid_token"', async () => {
    const token = await tokenThroughFlow(t, client, 'email')
    expect((await userinfo(bearer(token))).status).toBe(200)
    t.clock.advance(3600_000)
    await expect401(await userinfo(bearer(token)), 'Bearer realm="latchkey", error="invalid_token", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"')
  })

  test('"bearer" is case-insensitive', async () => {
    const token = await tokenThroughFlow(t, client, 'email')
    expect((await userinfo({ authorization: `bearer ${token}` })).status).toBe(200)
  })

  test('API answers carry CORS for any origin without credentials', async () => {
    const res = await userinfo()
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    const pre = await t.handle('/api/oauth/userinfo', {
      method: 'OPTIONS',
      headers: { origin: 'https://spa.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('*')
    expect(pre.headers.get('access-control-allow-headers')).toContain('Authorization')
  })
})
