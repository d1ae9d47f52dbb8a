/** Issue 10 in-process (both engines): refresh tokens, rotation, reuse detection, introspection. */
import { describe, expect, test } from 'bun:test'
import { randomToken, sha256 } from '../../src/lib/crypto'
import {
  CALLBACK,
  addClient,
  addUser,
  authorizeAndAllow,
  bearer,
  cookieHeader,
  createTestApp,
  csrfFrom,
  form,
  postForm,
  signIn,
  type TestApp,
} from '../helpers'

type Tokens = { access_token: string; refresh_token: string; scope: string; token_type: string; expires_in: number }

async function world(env: Record<string, string> = {}) {
  const t = await createTestApp(env)
  const app = await addClient(t)
  const other = await addClient(t, { name: 'Other App' })
  const user = await addUser(t)
  const jar = await signIn(t)
  return { t, app, other, user, jar }
}

const basic = (c: { client: { id: string }; secret: string }) => 'Basic ' + btoa(`${c.client.id}:${c.secret}`)

function post(t: TestApp, path: string, fields: Record<string, string | undefined>, auth?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (auth) headers.authorization = auth
  return t.handle(path, { method: 'POST', headers, body: form(fields) })
}

async function codeExchange(w: Awaited<ReturnType<typeof world>>, scope = 'profile email settings:read'): Promise<Tokens> {
  const callback = await authorizeAndAllow(w.t, w.jar, { client_id: w.app.client.id, redirect_uri: CALLBACK, scope, state: 's' })
  const res = await post(w.t, '/api/oauth/token', { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK }, basic(w.app))
  expect(res.status).toBe(200)
  return (await res.json()) as Tokens
}

const refresh = (w: Awaited<ReturnType<typeof world>>, token: string | undefined, extra: Record<string, string> = {}, auth = basic(w.app)) =>
  post(w.t, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: token, ...extra }, auth)

async function expectError(res: Response, status: number, error: string) {
  expect(res.status).toBe(status)
  expect(((await res.json()) as { error: string }).error).toBe(error)
}

const userinfoStatus = async (t: TestApp, token: string) => (await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status

describe('the refresh grant (RFC 6749 §6)', () => {
  test('a code exchange returns a refresh token; refreshing gives a new access token and a new refresh token', async () => {
    const w = await world()
    const first = await codeExchange(w)
    expect(first.refresh_token).toMatch(/^lk_rt_[0-9a-z]+\.[A-Za-z0-9_-]{65}$/)
    const res = await refresh(w, first.refresh_token)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const next = (await res.json()) as Tokens
    expect(Object.keys(next).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type'])
    expect(next).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'profile email settings:read' })
    expect(next.access_token).not.toBe(first.access_token)
    expect(next.refresh_token).not.toBe(first.refresh_token)
    expect(await userinfoStatus(w.t, next.access_token)).toBe(200)
    // The new refresh token refreshes again.
    expect((await refresh(w, next.refresh_token)).status).toBe(200)
    // Only hashes are stored.
    const stored = JSON.stringify(await w.t.rows('SELECT * FROM refresh_tokens'))
    expect(stored).not.toContain(first.refresh_token.split('.')[1]!)
  })

  test('a narrower scope gives less; a scope outside the grant is invalid_scope', async () => {
    const w = await world()
    const first = await codeExchange(w)
    const narrow = await refresh(w, first.refresh_token, { scope: 'email' })
    expect(narrow.status).toBe(200)
    const tokens = (await narrow.json()) as Tokens
    expect(tokens.scope).toBe('email')
    const info = (await (await w.t.handle('/api/oauth/userinfo', { headers: bearer(tokens.access_token) })).json()) as object
    expect(Object.keys(info).sort()).toEqual(['email', 'id'])
    // The next refresh token still carries the whole grant.
    const wide = (await (await refresh(w, tokens.refresh_token)).json()) as Tokens
    expect(wide.scope).toBe('profile email settings:read')
    for (const scope of ['settings:write', 'email nope', ' ']) await expectError(await refresh(w, wide.refresh_token, { scope }), 400, 'invalid_scope')
  })

  test('missing refresh_token → 400 invalid_request; unknown or malformed → 400 invalid_grant', async () => {
    const w = await world()
    await expectError(await refresh(w, undefined), 400, 'invalid_request')
    await expectError(await refresh(w, ''), 400, 'invalid_request')
    for (const bad of ['lk_rt_zz.' + 'a'.repeat(43), 'garbage', 'lk_at_1.' + 'a'.repeat(43)]) await expectError(await refresh(w, bad), 400, 'invalid_grant')
    const real = (await codeExchange(w)).refresh_token
    await expectError(await refresh(w, real.slice(0, -3) + 'AAA'), 400, 'invalid_grant')
  })

  test('client authentication fails exactly as for codes; another client\'s refresh token is invalid_grant', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    await expectError(await refresh(w, tokens.refresh_token, {}, ''), 401, 'invalid_client')
    const wrong = await refresh(w, tokens.refresh_token, {}, 'Basic ' + btoa(`${w.app.client.id}:nope`))
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toStartWith('Basic')
    await expectError(await refresh(w, tokens.refresh_token, {}, basic(w.other)), 400, 'invalid_grant')
    // Refused attempts used nothing up.
    expect((await refresh(w, tokens.refresh_token)).status).toBe(200)
  })

  test('an expired refresh token (REFRESH_TOKEN_TTL) → invalid_grant', async () => {
    const w = await world({ REFRESH_TOKEN_TTL: '120' })
    const tokens = await codeExchange(w)
    w.t.clock.advance(120_000)
    await expectError(await refresh(w, tokens.refresh_token), 400, 'invalid_grant')
  })

  test('a public client refreshes with its client_id and no secret', async () => {
    const t = await createTestApp()
    const app = await addClient(t, { public: true })
    await addUser(t)
    const jar = await signIn(t)
    const verifier = 'v'.repeat(43)
    const { sha256 } = await import('../../src/lib/crypto')
    const callback = await authorizeAndAllow(t, jar, { client_id: app.client.id, redirect_uri: CALLBACK, scope: 'email', code_challenge: sha256(verifier), code_challenge_method: 'S256' })
    const first = (await (await post(t, '/api/oauth/token', { grant_type: 'authorization_code', client_id: app.client.id, code: callback.searchParams.get('code')!, redirect_uri: CALLBACK, code_verifier: verifier })).json()) as Tokens
    const res = await post(t, '/api/oauth/token', { grant_type: 'refresh_token', client_id: app.client.id, refresh_token: first.refresh_token })
    expect(res.status).toBe(200)
  })
})

describe('rotation and reuse detection (RFC 9700 §4.14.2)', () => {
  test('presented again within REFRESH_TOKEN_REUSE_GRACE (two tabs): both succeed, nothing is revoked', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    const a = (await (await refresh(w, tokens.refresh_token)).json()) as Tokens
    w.t.clock.advance(9_999)
    const b = await refresh(w, tokens.refresh_token)
    expect(b.status).toBe(200)
    const bTokens = (await b.json()) as Tokens
    for (const access of [tokens.access_token, a.access_token, bTokens.access_token]) expect(await userinfoStatus(w.t, access)).toBe(200)
    expect((await refresh(w, a.refresh_token)).status).toBe(200)
    expect((await refresh(w, bTokens.refresh_token)).status).toBe(200)
  })

  test('presented again after the grace window: invalid_grant, and every token of the grant is revoked', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    const a = (await (await refresh(w, tokens.refresh_token)).json()) as Tokens
    const b = (await (await refresh(w, a.refresh_token)).json()) as Tokens
    w.t.clock.advance(10_000)
    const reuse = await refresh(w, tokens.refresh_token)
    expect(reuse.status).toBe(400)
    expect(await reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was already used; every token of its grant is revoked' })
    for (const access of [tokens.access_token, a.access_token, b.access_token]) expect(await userinfoStatus(w.t, access)).toBe(401)
    await expectError(await refresh(w, b.refresh_token), 400, 'invalid_grant')
    expect(await w.t.rows('SELECT id FROM refresh_tokens')).toEqual([])
    // Another grant of the same user and app is untouched.
    const fresh = await codeExchange(w)
    expect((await refresh(w, fresh.refresh_token)).status).toBe(200)
  })

  test('with no grace, the same token refreshed twice at once: one success, one invalid_grant, never two live successors', async () => {
    const w = await world({ REFRESH_TOKEN_REUSE_GRACE: '0' })
    for (let round = 0; round < 5; round++) {
      const tokens = await codeExchange(w)
      const answers = await Promise.all([refresh(w, tokens.refresh_token), refresh(w, tokens.refresh_token)])
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400])
      const winner = (await answers.find((r) => r.status === 200)!.json()) as Tokens
      // The loser revoked the family, the winner's successor included: nothing of it stays alive.
      await expectError(await refresh(w, winner.refresh_token), 400, 'invalid_grant')
    }
  })

  test('a replayed authorization code revokes the refresh tokens it led to', async () => {
    const w = await world()
    const callback = await authorizeAndAllow(w.t, w.jar, { client_id: w.app.client.id, redirect_uri: CALLBACK, scope: 'email', state: 's' })
    const exchange = () => post(w.t, '/api/oauth/token', { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK }, basic(w.app))
    const tokens = (await (await exchange()).json()) as Tokens
    const next = (await (await refresh(w, tokens.refresh_token)).json()) as Tokens
    await expectError(await exchange(), 400, 'invalid_grant')
    await expectError(await refresh(w, next.refresh_token), 400, 'invalid_grant')
    expect(await userinfoStatus(w.t, next.access_token)).toBe(401)
  })

  test('storage per family stays bounded: rotated rows go once the grace has passed, and their reuse is still detected', async () => {
    const w = await world()
    const first = await codeExchange(w)
    let current = first
    for (let i = 0; i < 30; i++) {
      w.t.clock.advance(11_000)
      current = (await (await refresh(w, current.refresh_token)).json()) as Tokens
    }
    // One live row and the one rotated just now (within the grace); 30 rotations left nothing else.
    expect(await w.t.rows('SELECT id FROM refresh_tokens')).toHaveLength(2)
    expect(await w.t.rows('SELECT id FROM refresh_families')).toHaveLength(1)
    w.t.clock.advance(11_000)
    // The first token's row is long gone, yet it is known as this family's: its reuse revokes all of it.
    const reuse = await refresh(w, first.refresh_token)
    expect(reuse.status).toBe(400)
    expect(await reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was already used; every token of its grant is revoked' })
    await expectError(await refresh(w, current.refresh_token), 400, 'invalid_grant')
    expect(await userinfoStatus(w.t, current.access_token)).toBe(401)
    expect(await w.t.rows('SELECT id FROM refresh_families')).toEqual([])
  })

  test('a refresh token issued before families had keys (lk_rt_<row>.<secret>) still refreshes, and moves its family to keys', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    // What migration 0009/0006 leaves of an older grant: the family without a key, a row whose
    // token spells its own id.
    const [family] = await w.t.rows('SELECT family_id, client_id, user_id, scope, expires_at, created_at FROM refresh_tokens')
    const secret = randomToken()
    await w.t.rows('UPDATE refresh_families SET key_hash = NULL')
    await w.t.rows('DELETE FROM refresh_tokens')
    await w.t.rows(
      'INSERT INTO refresh_tokens (id, verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      777, sha256(secret), family!.family_id, family!.client_id, family!.user_id, family!.scope, family!.expires_at, family!.created_at,
    )
    const old = `lk_rt_${(777).toString(36)}.${secret}`
    await expectError(await refresh(w, tokens.refresh_token), 400, 'invalid_grant') // the family has no key now
    const res = await refresh(w, old)
    expect(res.status).toBe(200)
    const next = (await res.json()) as Tokens
    expect(next.refresh_token).toMatch(/^lk_rt_[0-9a-z]+\.[A-Za-z0-9_-]{65}$/)
    expect((await w.t.row('SELECT key_hash FROM refresh_families'))!.key_hash).toBeString()
    expect((await refresh(w, next.refresh_token)).status).toBe(200)
    // Within the grace the old token still works (two tabs); its misuse later is refused.
    w.t.clock.advance(11_000)
    await expectError(await refresh(w, old), 400, 'invalid_grant')
  })

  test('a token naming a family without its key revokes nothing', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    const [head, verifier] = tokens.refresh_token.split('.') as [string, string]
    const forged = `${head}.${'A'.repeat(22)}${verifier.slice(22)}`
    await expectError(await refresh(w, forged), 400, 'invalid_grant')
    expect((await refresh(w, tokens.refresh_token)).status).toBe(200)
  })

  test('past 60 refreshes of one family in a minute: 429 invalid_grant with Retry-After, nothing revoked', async () => {
    const w = await world()
    let current = await codeExchange(w)
    for (let i = 0; i < 60; i++) {
      const res = await refresh(w, current.refresh_token)
      expect(res.status).toBe(200)
      current = (await res.json()) as Tokens
    }
    w.t.clock.advance(15_000)
    const limited = await refresh(w, current.refresh_token)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('45')
    expect(await limited.json()).toEqual({ error: 'invalid_grant', error_description: 'this grant was refreshed too often; try again in a minute' })
    expect(await userinfoStatus(w.t, current.access_token)).toBe(200)
    w.t.clock.advance(45_000)
    expect((await refresh(w, current.refresh_token)).status).toBe(200)
    // Another family of the same user and app has its own allowance.
    expect((await refresh(w, (await codeExchange(w)).refresh_token)).status).toBe(200)
  })

  test('a code replayed after the purge still revokes its family', async () => {
    const w = await world()
    const callback = await authorizeAndAllow(w.t, w.jar, { client_id: w.app.client.id, redirect_uri: CALLBACK, scope: 'email', state: 's' })
    const exchange = () => post(w.t, '/api/oauth/token', { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK }, basic(w.app))
    const tokens = (await (await exchange()).json()) as Tokens
    w.t.clock.advance(2 * 3600_000)
    await w.t.store.purgeExpired(w.t.clock.now(), { usedCodes: 3600_000, throttle: 3600_000, refreshGrace: 10_000, retiredKeys: 3600_000, mail: 7 * 24 * 3600_000, settingChanges: 30 * 86_400_000 })
    await expectError(await exchange(), 400, 'invalid_grant')
    await expectError(await refresh(w, tokens.refresh_token), 400, 'invalid_grant')
  })
})

describe('ending a grant', () => {
  test('RFC 7009: revoking a refresh token (with token_type_hint) ends its whole family', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    const next = (await (await refresh(w, tokens.refresh_token)).json()) as Tokens
    const res = await post(w.t, '/api/oauth/revoke', { token: next.refresh_token, token_type_hint: 'refresh_token' }, basic(w.app))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({})
    await expectError(await refresh(w, next.refresh_token), 400, 'invalid_grant')
    for (const access of [tokens.access_token, next.access_token]) expect(await userinfoStatus(w.t, access)).toBe(401)
    // Another client cannot revoke it.
    const mine = await codeExchange(w)
    const refused = await post(w.t, '/api/oauth/revoke', { token: mine.refresh_token }, basic(w.other))
    expect(refused.status).toBe(400)
    expect((await refresh(w, mine.refresh_token)).status).toBe(200)
  })

  test('revoking the app on /account, deleting the user or the client end refresh tokens too', async () => {
    for (const end of ['account', 'user', 'client'] as const) {
      const w = await world()
      const tokens = await codeExchange(w)
      if (end === 'account') {
        const page = await (await w.t.handle('/account', { headers: { cookie: cookieHeader(w.jar) } })).text()
        expect((await postForm(w.t, '/account/revoke', { csrf_token: csrfFrom(page), client_id: w.app.client.id }, w.jar)).status).toBe(303)
      } else if (end === 'user') await w.t.store.users.deleteUser(w.user.id)
      else await w.t.store.clients.deleteClient(w.app.client.id)
      const res = await refresh(w, tokens.refresh_token)
      expect([end, res.status]).toEqual([end, end === 'client' ? 401 : 400])
      expect(await w.t.rows('SELECT id FROM refresh_tokens')).toEqual([])
    }
  })

  test('/account shows when each app was last used', async () => {
    const w = await world()
    const before = await (await w.t.handle('/account', { headers: { cookie: cookieHeader(w.jar) } })).text()
    expect(before).not.toContain('last used')
    await codeExchange(w)
    w.t.clock.advance(3 * 24 * 3600_000)
    const tokens = await codeExchange(w)
    await refresh(w, tokens.refresh_token)
    const page = await (await w.t.handle('/account', { headers: { cookie: cookieHeader(w.jar) } })).text()
    expect(page).toContain(`last used <time datetime="${new Date(w.t.clock.now()).toISOString()}">`)
  })
})

describe('introspection (RFC 7662)', () => {
  const introspect = (w: Awaited<ReturnType<typeof world>>, token: string, auth: string | undefined = basic(w.app), extra: Record<string, string> = {}) =>
    post(w.t, '/api/oauth/introspect', { token, ...extra }, auth)

  test('an active access token: scope, client_id, sub, exp, iat, token_type, iss, auth_time, amr — to its own client only', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    const now = Math.floor(w.t.clock.now() / 1000)
    const res = await introspect(w, tokens.access_token, basic(w.app))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(await res.json()).toEqual({
      active: true,
      scope: 'profile email settings:read',
      client_id: w.app.client.id,
      sub: w.user.id,
      exp: now + 3600,
      iat: now,
      token_type: 'Bearer',
      iss: w.t.config.issuer,
      auth_time: now,
      amr: ['pwd'],
    })
    // Another client learns nothing about it, not even that it exists (SPEC "Introspection").
    const other = await introspect(w, tokens.access_token, basic(w.other))
    expect(other.status).toBe(200)
    expect(await other.json()).toEqual({ active: false })
  })

  test('unknown, malformed, expired or revoked → exactly {active: false}', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    for (const token of ['garbage', 'lk_at_1.' + 'a'.repeat(43), 'lk_rt_99.' + 'b'.repeat(43)]) expect(await (await introspect(w, token)).json()).toEqual({ active: false })
    await post(w.t, '/api/oauth/revoke', { token: tokens.access_token }, basic(w.app))
    expect(await (await introspect(w, tokens.access_token)).json()).toEqual({ active: false })
    const later = await codeExchange(w)
    w.t.clock.advance(3600_000)
    expect(await (await introspect(w, later.access_token)).json()).toEqual({ active: false })
  })

  test('a refresh token is described only to its own client, and as the token endpoint treats it (active within the reuse grace)', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    const mine = (await (await introspect(w, tokens.refresh_token, basic(w.app), { token_type_hint: 'refresh_token' })).json()) as Record<string, unknown>
    expect(mine).toMatchObject({ active: true, client_id: w.app.client.id, sub: w.user.id, token_type: 'refresh_token', scope: 'profile email settings:read', amr: ['pwd'] })
    expect(await (await introspect(w, tokens.refresh_token, basic(w.other))).json()).toEqual({ active: false })
    await refresh(w, tokens.refresh_token)
    // Rotated, but within REFRESH_TOKEN_REUSE_GRACE the token endpoint still accepts it: so does introspection.
    expect(await (await introspect(w, tokens.refresh_token)).json()).toMatchObject({ active: true, token_type: 'refresh_token' })
    w.t.clock.advance(10_000)
    expect(await (await introspect(w, tokens.refresh_token)).json()).toEqual({ active: false })
  })

  test('by a public client or without authentication → 401 invalid_client; an empty token → 400', async () => {
    const w = await world()
    const tokens = await codeExchange(w)
    const pub = await addClient(w.t, { public: true })
    await expectError(await post(w.t, '/api/oauth/introspect', { token: tokens.access_token, client_id: pub.client.id }), 401, 'invalid_client')
    await expectError(await post(w.t, '/api/oauth/introspect', { token: tokens.access_token }), 401, 'invalid_client')
    await expectError(await introspect(w, ''), 400, 'invalid_request')
  })

  test('RFC 6749 §3.2: parameters sent without a value are omitted — HTTP Basic beside empty client_id= and client_secret= (Dovecot)', async () => {
    const w = await world()
    const callback = await authorizeAndAllow(w.t, w.jar, { client_id: w.app.client.id, redirect_uri: CALLBACK, scope: 'email', state: 's' })
    const code = callback.searchParams.get('code')!
    const exchanged = await post(w.t, '/api/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: '', client_secret: '', scope: '' }, basic(w.app))
    expect(exchanged.status).toBe(200)
    const tokens = (await exchanged.json()) as Tokens
    const described = await introspect(w, tokens.access_token, basic(w.app), { client_id: '', client_secret: '', token_type_hint: '' })
    expect(described.status).toBe(200)
    expect(await described.json()).toMatchObject({ active: true, client_id: w.app.client.id })
    const revoked = await post(w.t, '/api/oauth/revoke', { token: tokens.access_token, client_id: '', client_secret: '' }, basic(w.app))
    expect(revoked.status).toBe(200)
    expect(await userinfoStatus(w.t, tokens.access_token)).toBe(401)
    // An empty refresh scope is no scope: the whole grant, not invalid_scope.
    const refreshed = await refresh(w, tokens.refresh_token, { scope: '', client_id: '' })
    expect(refreshed.status).toBe(200)
    expect(((await refreshed.json()) as Tokens).scope).toBe('email')
  })
})
