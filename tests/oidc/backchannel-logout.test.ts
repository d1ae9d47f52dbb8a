import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose'
import { createSession } from '../../src/accounts/sessions'
import { insertUser } from '../../src/accounts/users'
import { loadConfig } from '../../src/config'
import { createContext } from '../../src/context'
import { manualClock } from '../../src/lib/clock'
import { createClient, DEVICE_CODE } from '../../src/oauth/clients'
import { BackchannelLogout, LOGOUT_EVENT } from '../../src/oidc/backchannel-logout'
import { CALLBACK, ORIGIN, PASSWORD, addUser, cookiesFrom, authorizeAndAllow, cookieHeader, createTestApp, csrfFrom, postForm, testSigningKey, tokenRequest, type TestApp } from '../helpers'
import { openTestStorePair } from '../store'
import { forgot, outboxOf, reset } from '../accounts/mail-flows'
import { browse, signInFrom, signedIn, type Jar } from '../sessions/flows'
import { until } from '../wait'

// Several sign-ins and code exchanges per test: more than the default 5 s on a busy machine.
setDefaultTimeout(20_000)

/** A relying party's back-channel logout endpoint on 127.0.0.1: every POST it received. */
function receiver(port = 0, status = 200) {
  const got: { contentType: string | null; token: string; body: string }[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(request) {
      const body = await request.text()
      got.push({ contentType: request.headers.get('content-type'), token: new URLSearchParams(body).get('logout_token') ?? '', body })
      return new Response(null, { status })
    },
  })
  return { got, server, url: `http://127.0.0.1:${server.port}/backchannel-logout` }
}

const servers: { stop(force?: boolean): unknown }[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true)
})

async function appWithRp(opts: { sessionRequired?: boolean } = {}) {
  const t = await createTestApp()
  const user = await addUser(t)
  const rp = receiver()
  servers.push(rp.server)
  const app = await createClient(t.store, { name: 'Wiki', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: rp.url, backchannelLogoutSessionRequired: opts.sessionRequired }, t.clock.now())
  return { t, user, rp, app, sender: new BackchannelLogout(t.ctx) }
}

/** Signs the browser in to the app with `openid`: the id_token it got (and the refresh token). */
async function tokensFor(t: TestApp, app: { client: { id: string }; secret: string | null }, jar: Jar, scope = 'openid') {
  const callback = await authorizeAndAllow(t, jar, { client_id: app.client.id, redirect_uri: CALLBACK, scope, state: 's', nonce: 'n-1', response_type: 'code' })
  const res = await tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: app.client.id, client_secret: app.secret!, redirect_uri: CALLBACK })
  expect(res.status).toBe(200)
  return (await res.json()) as { id_token: string; refresh_token: string }
}
const idTokenFor = async (t: TestApp, app: { client: { id: string }; secret: string | null }, jar: Jar) => (await tokensFor(t, app, jar)).id_token

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>

/** Verifies a logout token as an RP would (jose, against the JWKS) and returns its claims. */
async function verifyLogoutToken(t: TestApp, token: string, audience: string) {
  const jwks = createLocalJWKSet((await (await t.handle('/.well-known/jwks.json')).json()) as JSONWebKeySet)
  const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: ORIGIN, audience, typ: 'logout+jwt', currentDate: new Date(t.clock.now()) })
  return { payload, protectedHeader }
}

describe('OpenID Connect Back-Channel Logout 1.0', () => {
  test('discovery says so; id_tokens carry the session\'s sid, the same for every app', async () => {
    const { t, app } = await appWithRp()
    const doc = (await (await t.handle('/.well-known/openid-configuration')).json()) as Record<string, unknown>
    expect(doc.backchannel_logout_supported).toBe(true)
    expect(doc.backchannel_logout_session_supported).toBe(true)
    const other = await createClient(t.store, { name: 'Other', redirectUris: [CALLBACK], public: false, skipConsent: true }, t.clock.now())
    const jar = await signInFrom(t)
    const sid = (await t.rows('SELECT sid FROM sessions'))[0]!.sid
    expect(claimsOf(await idTokenFor(t, app, jar)).sid).toBe(sid)
    expect(claimsOf(await idTokenFor(t, other, jar)).sid).toBe(sid)
    // A refreshed id_token keeps it (OpenID Connect Core §12.2)…
    const first = await tokensFor(t, app, jar, 'openid offline_access')
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: app.client.id, client_secret: app.secret! })
    expect(claimsOf(((await refreshed.json()) as { id_token: string }).id_token).sid).toBe(sid)
    // …and another browser's session has its own.
    const jar2 = await signInFrom(t)
    expect(claimsOf(await idTokenFor(t, app, jar2)).sid).not.toBe(sid)
  })

  test('the device grant: the id_token carries the sid of the session that allowed it, and that session ending notifies the device\'s app', async () => {
    const t = await createTestApp()
    await addUser(t)
    const rp = receiver()
    servers.push(rp.server)
    const tv = (await createClient(t.store, { name: 'TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE], backchannelLogoutUri: rp.url }, t.clock.now())).client.id
    const form = (path: string, fields: Record<string, string>) => t.handle(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })
    const started = (await (await form('/api/oauth/device_authorization', { client_id: tv, scope: 'openid' })).json()) as { device_code: string; user_code: string }
    const jar = await signInFrom(t)
    const sid = (await t.rows('SELECT sid FROM sessions'))[0]!.sid
    const page = await browse(t, `/device?user_code=${started.user_code}`, jar)
    expect((await postForm(t, '/device', { user_code: started.user_code, decision: 'allow', csrf_token: csrfFrom(await page.text()) }, jar)).status).toBe(200)
    const tokens = await form('/api/oauth/token', { grant_type: DEVICE_CODE, device_code: started.device_code, client_id: tv })
    expect(tokens.status).toBe(200)
    const body = (await tokens.json()) as { id_token: string; refresh_token: string }
    expect(claimsOf(body.id_token).sid).toBe(sid)
    // Refreshed, it keeps it.
    const refreshed = await form('/api/oauth/token', { grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: tv })
    expect(claimsOf(((await refreshed.json()) as { id_token: string }).id_token).sid).toBe(sid)
    const account = await browse(t, '/account', jar)
    await browse(t, '/logout', jar, { body: { csrf_token: csrfFrom(await account.text()) } })
    expect(await new BackchannelLogout(t.ctx).tick()).toBe(1)
    expect((await verifyLogoutToken(t, rp.got[0]!.token, tv)).payload.sid).toBe(sid)
  })

  test('sign-out: the app is POSTed a logout token (a form, signed like id_tokens) — after the answer, by the sender', async () => {
    const { t, user, rp, app, sender } = await appWithRp()
    const jar = await signInFrom(t)
    const idToken = await idTokenFor(t, app, jar)
    const page = await browse(t, '/account', jar)
    const res = await browse(t, '/logout', jar, { body: { csrf_token: csrfFrom(await page.text()) } })
    expect(res.status).toBe(303)
    // The sign-out answered without calling the app: the delivery is queued.
    expect(rp.got).toEqual([])
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 1, sent: 0, failed: 0 })
    t.clock.advance(5000)
    expect(await sender.tick()).toBe(1)
    expect(rp.got).toHaveLength(1)
    expect(rp.got[0]!.contentType).toBe('application/x-www-form-urlencoded')
    expect(rp.got[0]!.body).toStartWith('logout_token=')
    const { payload, protectedHeader } = await verifyLogoutToken(t, rp.got[0]!.token, app.client.id)
    expect(protectedHeader).toMatchObject({ typ: 'logout+jwt', alg: 'RS256' })
    expect(protectedHeader.kid).toBe(decodeProtectedHeader(idToken).kid!)
    const iat = Math.floor(t.clock.now() / 1000)
    expect(payload).toEqual({ iss: ORIGIN, aud: app.client.id, iat, exp: iat + 120, jti: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), sub: user.id, sid: claimsOf(idToken).sid, events: { [LOGOUT_EVENT]: {} } })
    expect(payload.nonce).toBeUndefined()
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 0, sent: 1, failed: 0 })
    // Once: another round sends nothing.
    expect(await sender.tick()).toBe(0)
    expect(rp.got).toHaveLength(1)
  })

  test('only the apps that got an id_token in that session, and only those with a URI', async () => {
    const { t, rp, app, sender } = await appWithRp()
    const rp2 = receiver()
    servers.push(rp2.server)
    const second = await createClient(t.store, { name: 'Second', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: rp2.url }, t.clock.now())
    const plain = await createClient(t.store, { name: 'Plain', redirectUris: [CALLBACK], public: false, skipConsent: true }, t.clock.now())
    const laptop = await signInFrom(t)
    const phone = await signInFrom(t)
    const sid = claimsOf(await idTokenFor(t, app, laptop)).sid
    await idTokenFor(t, plain, laptop)
    await idTokenFor(t, second, phone) // another session: not ended
    const page = await browse(t, '/account', laptop)
    await browse(t, '/logout', laptop, { body: { csrf_token: csrfFrom(await page.text()) } })
    expect(await sender.tick()).toBe(1)
    expect(rp.got.map((g) => claimsOf(g.token).sid)).toEqual([sid])
    expect(rp2.got).toEqual([])
    expect(await signedIn(t, phone)).toBe(true)
  })

  test('signing in again in the same browser (prompt=login, a step-up) keeps the session: same sid, no logout token; another person\'s sign-in ends it', async () => {
    const { t, rp, app, sender } = await appWithRp()
    await addUser(t, 'bob@example.com', 'Bob')
    const jar = await signInFrom(t)
    const sid = claimsOf(await idTokenFor(t, app, jar)).sid
    // An app asked for a fresh sign-in: the same person signs in again over the live session.
    const again = async (email: string) => {
      const page = await browse(t, '/login?reauth=1', jar)
      const res = await browse(t, '/login', jar, { body: { email, password: PASSWORD, csrf_token: csrfFrom(await page.text()) } })
      expect(res.status).toBe(303)
      cookiesFrom(res, jar)
    }
    await again('ann@example.com')
    expect(await sender.tick()).toBe(0)
    expect(await t.rows('SELECT sid FROM logout_deliveries')).toEqual([])
    expect(await t.rows('SELECT sid FROM sessions')).toEqual([{ sid }])
    expect(claimsOf(await idTokenFor(t, app, jar)).sid).toBe(sid)
    // Someone else signing in on this browser ends Ann's session: the app hears of it, once.
    await again('bob@example.com')
    expect(await sender.tick()).toBe(1)
    expect(rp.got.map((g) => claimsOf(g.token))).toMatchObject([{ sid }])
    expect((await t.rows('SELECT sid FROM sessions')).map((r) => r.sid)).not.toContain(sid)
  })

  test('RP-initiated logout ends the session and notifies the app', async () => {
    const { t, rp, app, sender } = await appWithRp()
    const jar = await signInFrom(t)
    const idToken = await idTokenFor(t, app, jar)
    const confirm = await t.handle(`/oauth/logout?id_token_hint=${idToken}`, { headers: { cookie: cookieHeader(jar) } })
    const res = await postForm(t, '/oauth/logout', { csrf_token: csrfFrom(await confirm.text()), id_token_hint: idToken }, jar)
    expect(res.status).toBe(200)
    expect(await signedIn(t, jar)).toBe(false)
    expect(await sender.tick()).toBe(1)
    expect((await verifyLogoutToken(t, rp.got[0]!.token, app.client.id)).payload.sid).toBe(claimsOf(idToken).sid)
  })

  test("an admin's sign out everywhere, disabling and deleting each notify the app of every session", async () => {
    const { t, user, rp, app, sender } = await appWithRp()
    const admin = await addUser(t, 'root@example.com', 'Root')
    await t.store.users.setAdmin(admin.id, true)
    const adminJar = await signInFrom(t, { email: 'root@example.com' })
    const sids = [claimsOf(await idTokenFor(t, app, await signInFrom(t))).sid, claimsOf(await idTokenFor(t, app, await signInFrom(t))).sid]
    const page = await (await browse(t, '/admin/users', adminJar)).text()
    expect((await browse(t, '/admin/users/sign-out', adminJar, { body: { csrf_token: csrfFrom(page), user_id: user.id, confirmed: 'yes' } })).status).toBe(303)
    expect(await sender.tick()).toBe(2)
    expect(rp.got.map((g) => claimsOf(g.token).sid).sort()).toEqual([...sids].sort() as string[])

    // Disabling, then deleting: each ends the sessions of that moment.
    const again = claimsOf(await idTokenFor(t, app, await signInFrom(t))).sid
    await t.store.users.setDisabled(user.id, true, t.clock.now())
    expect(await sender.tick()).toBe(1)
    expect(claimsOf(rp.got[2]!.token).sid).toBe(again)
    await t.store.users.setDisabled(user.id, false, t.clock.now())
    const last = claimsOf(await idTokenFor(t, app, await signInFrom(t))).sid
    expect(await t.store.users.deleteUser(user.id)).toBe(true)
    expect(await sender.tick()).toBe(1)
    expect(claimsOf(rp.got[3]!.token)).toMatchObject({ sid: last, sub: user.id })
  })

  test('a password reset ends every session of the user: each app is notified', async () => {
    const t = await createTestApp({ SMTP_URL: 'smtp://127.0.0.1:2525', NEW_DEVICE_EMAIL: 'off', LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
    await addUser(t)
    const rp = receiver()
    servers.push(rp.server)
    const app = await createClient(t.store, { name: 'Wiki', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: rp.url }, t.clock.now())
    const sid = claimsOf(await idTokenFor(t, app, await signInFrom(t))).sid
    expect((await forgot(t, 'ann@example.com')).status).toBe(200)
    const [link] = (await outboxOf(t, 1)).map((m) => m.link!)
    expect((await reset(t, link!, 'a brand new password')).status).toBe(200)
    expect(await new BackchannelLogout(t.ctx).tick()).toBe(1)
    expect(rp.got.map((g) => claimsOf(g.token).sid)).toEqual([sid])
  })

  test('an app that is down at first gets the logout token once it is back, on the outbox\'s back-off, freshly signed', async () => {
    const { t, rp, app, sender } = await appWithRp()
    const port = Number(new URL(rp.url).port)
    rp.server.stop(true) // the app is down
    const jar = await signInFrom(t)
    await idTokenFor(t, app, jar)
    const page = await browse(t, '/account', jar)
    await browse(t, '/logout', jar, { body: { csrf_token: csrfFrom(await page.text()) } })
    expect(await sender.tick()).toBe(1) // attempted, refused
    const row = (await t.row('SELECT attempts, next_attempt_at, last_error FROM logout_deliveries'))!
    expect([Number(row.attempts), Number(row.next_attempt_at)]).toEqual([1, t.clock.now() + 30_000])
    expect(row.last_error).toContain('Unable to connect')
    t.clock.advance(29_999)
    expect(await sender.tick()).toBe(0) // not due yet
    const back = receiver(port)
    servers.push(back.server)
    t.clock.advance(1)
    expect(await sender.tick()).toBe(1)
    expect(back.got).toHaveLength(1)
    const { payload } = await verifyLogoutToken(t, back.got[0]!.token, app.client.id)
    expect(payload.iat).toBe(Math.floor(t.clock.now() / 1000))
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 0, sent: 1, failed: 0 })
  })

  test('retries back off from BACKCHANNEL_LOGOUT_RETRY seconds, doubling to at most 10 minutes apart, and are given up after 24 h', async () => {
    const t = await createTestApp({ BACKCHANNEL_LOGOUT_RETRY: '2' })
    await addUser(t)
    const rp = receiver(0, 503)
    servers.push(rp.server)
    const app = await createClient(t.store, { name: 'Wiki', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: rp.url }, t.clock.now())
    const sender = new BackchannelLogout(t.ctx)
    const jar = await signInFrom(t)
    await idTokenFor(t, app, jar)
    await t.store.sessions.deleteSessionsOf((await t.rows('SELECT user_id FROM sessions'))[0]!.user_id as string)
    const ended = t.clock.now()
    const gaps: number[] = []
    for (;;) {
      expect(await sender.tick()).toBe(1)
      const row = (await t.row('SELECT attempts, next_attempt_at, failed_at, last_error FROM logout_deliveries'))!
      expect(row.last_error).toBe('answered 503')
      if (row.failed_at !== null) break
      gaps.push(Number(row.next_attempt_at) - t.clock.now())
      t.clock.advance(Number(row.next_attempt_at) - t.clock.now())
    }
    expect(gaps.slice(0, 10)).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 600_000])
    expect(new Set(gaps.slice(9))).toEqual(new Set([600_000]))
    // Given up once the next try would fall past 24 h after the session ended.
    expect(t.clock.now() - ended).toBeLessThanOrEqual(24 * 3600_000)
    expect(t.clock.now() + 600_000 - ended).toBeGreaterThan(24 * 3600_000)
    expect(rp.got).toHaveLength(gaps.length + 1)
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 0, sent: 0, failed: 1 })
    expect(await sender.tick()).toBe(0)
  })

  test('BACKCHANNEL_LOGOUT_RETRY is whole seconds from 1 to 600', () => {
    expect(loadConfig({ DATABASE_URL: ':memory:' }).backchannelLogoutRetry).toBe(30)
    expect(loadConfig({ DATABASE_URL: ':memory:', BACKCHANNEL_LOGOUT_RETRY: '1' }).backchannelLogoutRetry).toBe(1)
    for (const bad of ['0', '601', '1.5', 'soon']) expect(() => loadConfig({ DATABASE_URL: ':memory:', BACKCHANNEL_LOGOUT_RETRY: bad })).toThrow('BACKCHANNEL_LOGOUT_RETRY: must be')
  })

  test('an app answering an error is tried again; a session that only timed out sends nothing', async () => {
    const t = await createTestApp({ SESSION_IDLE_TTL: '600' })
    await addUser(t)
    const rp = receiver(0, 500)
    servers.push(rp.server)
    const app = await createClient(t.store, { name: 'Wiki', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: rp.url }, t.clock.now())
    const sender = new BackchannelLogout(t.ctx)
    const jar = await signInFrom(t)
    await idTokenFor(t, app, jar)
    await t.store.sessions.deleteSessionsOf((await t.rows('SELECT user_id FROM sessions'))[0]!.user_id as string)
    expect(await sender.tick()).toBe(1)
    expect(rp.got).toHaveLength(1)
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 1, sent: 0, failed: 0 })
    // Idle past SESSION_IDLE_TTL, purged: no logout token for a timeout.
    const idle = await signInFrom(t)
    await idTokenFor(t, app, idle)
    t.clock.advance(600_001)
    const windows = { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 0, mail: 7 * 86_400_000, settingChanges: 0, sessionIdle: 600_000 }
    await t.store.purgeExpired(t.clock.now(), windows)
    expect(await t.rows('SELECT sid FROM sessions')).toEqual([])
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 1, sent: 0, failed: 0 })
  })
})

describe('back-channel logout across instances', () => {
  test('two senders on one database deliver each logout once', async () => {
    const pair = await openTestStorePair()
    try {
      await pair.store.keys.ensureSigningKeys(await testSigningKey(), await testSigningKey('next'))
      const clock = manualClock()
      const config = loadConfig({ DATABASE_URL: ':memory:', ISSUER: ORIGIN })
      const [one, two] = [await createContext({ store: pair.store, config, clock }), await createContext({ store: pair.other, config, clock })]
      const rp = receiver()
      servers.push(rp.server)
      const user = await insertUser(pair.store, { email: 'ann@example.com', fullName: 'Ann', avatarUrl: null, passwordHash: 'x' }, clock.now())
      const app = await createClient(pair.store, { name: 'Wiki', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: rp.url }, clock.now())
      for (let i = 0; i < 50; i++) {
        await createSession(pair.store, user.id, clock.now(), { amr: ['pwd'] })
      }
      const sids = (await pair.rows('SELECT sid FROM sessions')).map((r) => r.sid as string)
      for (const sid of sids) await pair.store.sessions.recordIdToken(sid, app.client.id)
      // Both instances end the sessions at once (the admin's button pressed twice): one delivery each.
      await Promise.all([pair.store.sessions.deleteSessionsOf(user.id), pair.other.sessions.deleteSessionsOf(user.id)])
      const senders = [new BackchannelLogout(one), new BackchannelLogout(two)]
      for (;;) {
        const attempted = await Promise.all(senders.map((s) => s.tick()))
        if (attempted.every((n) => n === 0)) break
      }
      const delivered = rp.got.map((g) => claimsOf(g.token).sid as string)
      expect(delivered.length).toBe(50)
      expect(new Set(delivered)).toEqual(new Set(sids))
      expect(await pair.store.sessions.logoutCounts()).toEqual({ waiting: 0, sent: 50, failed: 0 })
      await Promise.all([one.sessionActivity.stop(), two.sessionActivity.stop()])
    } finally {
      await pair.close()
    }
  })
})

describe('back-channel logout of dynamically registered apps (the metadata fetcher\'s address rules)', () => {
  const register = (t: TestApp, body: unknown) => t.handle('/api/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const APP = { client_name: 'Dyn', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'client_secret_basic' }

  test('backchannel_logout_uri must be https on a public address; a bad one registers nothing', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    const ok = await register(t, { ...APP, backchannel_logout_uri: 'https://rp.example/bc', backchannel_logout_session_required: true })
    expect(ok.status).toBe(201)
    expect(await ok.json()).toMatchObject({ backchannel_logout_uri: 'https://rp.example/bc', backchannel_logout_session_required: true })
    // RFC 6761 §6.3: every name under localhost (and the name with its root dot) is loopback, whatever DNS says.
    const localNames = ['https://localhost./bc', 'https://rp.localhost/bc', 'https://RP.LOCALHOST./bc']
    for (const bad of ['http://rp.example/bc', 'https://127.0.0.1/bc', 'https://10.1.2.3/bc', 'https://[::1]/bc', 'https://localhost/bc', ...localNames, 'https://rp.example/bc#f', 42]) {
      const res = await register(t, { ...APP, backchannel_logout_uri: bad })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata')
    }
    expect(await t.rows('SELECT backchannel_logout_uri FROM clients')).toEqual([{ backchannel_logout_uri: 'https://rp.example/bc' }])
  })

  test('delivered through the safe fetcher: an allowed host gets the POST; a private address is refused when sending', async () => {
    const rp = receiver()
    servers.push(rp.server)
    const host = new URL(rp.url).host
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open', CLIENT_ID_METADATA_ALLOW_HOSTS: host })
    await addUser(t)
    const made = (await (await register(t, { ...APP, backchannel_logout_uri: rp.url })).json()) as { client_id: string; client_secret: string }
    const app = { client: { id: made.client_id }, secret: made.client_secret }
    const sender = new BackchannelLogout(t.ctx)
    const jar = await signInFrom(t)
    const sid = claimsOf(await idTokenFor(t, app, jar)).sid
    await t.store.sessions.deleteSessionsOf((await t.rows('SELECT user_id FROM sessions'))[0]!.user_id as string)
    expect(await sender.tick()).toBe(1)
    expect(rp.got.map((g) => claimsOf(g.token).sid)).toEqual([sid])

    // Without the allowance (a name that now points at a private address), nothing is sent.
    const strict = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    await addUser(strict)
    const dyn = (await (await register(strict, { ...APP, backchannel_logout_uri: 'https://rp.example/bc' })).json()) as { client_id: string; client_secret: string }
    await strict.store.clients.setBackchannelLogout(dyn.client_id, `https://${host}/bc`, false)
    const jar2 = await signInFrom(strict)
    await idTokenFor(strict, { client: { id: dyn.client_id }, secret: dyn.client_secret }, jar2)
    await strict.store.sessions.deleteSessionsOf((await strict.rows('SELECT user_id FROM sessions'))[0]!.user_id as string)
    expect(await new BackchannelLogout(strict.ctx).tick()).toBe(1)
    expect(rp.got).toHaveLength(1)
    expect((await strict.row('SELECT last_error FROM logout_deliveries'))!.last_error).toBe('127.0.0.1 is not a public address')
  })

  test('a registered name that resolves to a private address when sending (DNS rebinding) is refused; nothing is sent', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    await addUser(t)
    const made = (await (await register(t, { ...APP, backchannel_logout_uri: 'https://rp.example/bc' })).json()) as { client_id: string; client_secret: string }
    const jar = await signInFrom(t)
    await idTokenFor(t, { client: { id: made.client_id }, secret: made.client_secret }, jar)
    await t.store.sessions.deleteSessionsOf((await t.rows('SELECT user_id FROM sessions'))[0]!.user_id as string)
    const asked: string[] = []
    // rp.example now resolves to the cloud metadata address and to a public one: any private address refuses it.
    const lookup = ((host: string, _o: unknown, cb: (e: null, l: { address: string; family: number }[]) => void) => {
      asked.push(host)
      cb(null, [{ address: '93.184.215.14', family: 4 }, { address: '169.254.169.254', family: 4 }])
    }) as never
    expect(await new BackchannelLogout(t.ctx, { lookup }).tick()).toBe(1)
    expect(asked).toEqual(['rp.example'])
    const row = (await t.row('SELECT attempts, sent_at, last_error FROM logout_deliveries'))!
    expect(row).toEqual({ attempts: 1, sent_at: null, last_error: 'rp.example resolves to an address that is not public' })
  })
})

describe('the sender under a slow, a redirecting or a stale app (review of the delivery code)', () => {
  /** An app whose endpoint takes each POST and answers only when released. */
  function heldReceiver() {
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    const got: string[] = []
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      idleTimeout: 0,
      async fetch(request) {
        got.push(new URLSearchParams(await request.text()).get('logout_token') ?? '')
        await released
        return new Response(null, { status: 200 })
      },
    })
    servers.push(server)
    return { got, release, url: `http://127.0.0.1:${server.port}/bc` }
  }

  /** A session of its own in which `app` got an id_token, then ended: one delivery due. */
  async function endedSessionWith(t: TestApp, app: { client: { id: string }; secret: string | null }, email: string) {
    const user = await addUser(t, email, email)
    const jar = await signInFrom(t, { email })
    const sid = claimsOf(await idTokenFor(t, app, jar)).sid as string
    await t.store.sessions.deleteSessionsOf(user.id)
    return sid
  }

  test('an app that holds its POST holds only its own delivery: another app\'s is sent meanwhile', async () => {
    const t = await createTestApp()
    const slow = heldReceiver()
    const fast = receiver()
    servers.push(fast.server)
    const slowApp = await createClient(t.store, { name: 'Slow', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: slow.url }, t.clock.now())
    const fastApp = await createClient(t.store, { name: 'Fast', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: fast.url }, t.clock.now())
    const sender = new BackchannelLogout(t.ctx)
    try {
      await endedSessionWith(t, slowApp, 'slow@example.com')
      sender.start(5)
      await until(() => slow.got.length === 1, 'the POST to the slow app')
      const sid = await endedSessionWith(t, fastApp, 'fast@example.com')
      // Well inside the 10 s an attempt may take: the fast app is not queued behind the slow one.
      await until(() => fast.got.length === 1, 'the fast app\'s logout token while the slow app still holds its POST', { timeoutMs: 4000 })
      expect(claimsOf(fast.got[0]!.token).sid).toBe(sid)
      expect(slow.got).toHaveLength(1)
    } finally {
      slow.release()
      await sender.stop()
    }
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 0, sent: 2, failed: 0 })
  })

  test('an attempt ends after its timeout: the delivery is tried again later, the sender is free', async () => {
    const t = await createTestApp()
    const slow = heldReceiver()
    const app = await createClient(t.store, { name: 'Slow', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: slow.url }, t.clock.now())
    await endedSessionWith(t, app, 'slow@example.com')
    try {
      const started = performance.now()
      expect(await new BackchannelLogout(t.ctx, { attemptTimeoutMs: 200 }).tick()).toBe(1)
      expect(performance.now() - started).toBeLessThan(5000)
      const row = (await t.row('SELECT attempts, next_attempt_at, sent_at, last_error FROM logout_deliveries'))!
      expect([Number(row.attempts), Number(row.next_attempt_at), row.sent_at]).toEqual([1, t.clock.now() + 30_000, null])
      expect(row.last_error).toContain('timed out')
    } finally {
      slow.release()
    }
  })

  test('a redirect is not followed: the app that answers 307 is tried again, the target gets nothing', async () => {
    const t = await createTestApp()
    const target = receiver()
    servers.push(target.server)
    const redirecting = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(null, { status: 307, headers: { location: target.url } }) })
    servers.push(redirecting)
    const app = await createClient(t.store, { name: 'Moved', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: `http://127.0.0.1:${redirecting.port}/bc` }, t.clock.now())
    await endedSessionWith(t, app, 'moved@example.com')
    expect(await new BackchannelLogout(t.ctx).tick()).toBe(1)
    expect(target.got).toEqual([])
    expect(await t.row('SELECT attempts, sent_at, last_error FROM logout_deliveries')).toEqual({ attempts: 1, sent_at: null, last_error: 'answered 307' })
  })

  test('sent and given-up deliveries are purged a week later; waiting ones are kept', async () => {
    const t = await createTestApp()
    const ok = receiver()
    const down = receiver(0, 503)
    servers.push(ok.server, down.server)
    const okApp = await createClient(t.store, { name: 'Ok', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: ok.url }, t.clock.now())
    const downApp = await createClient(t.store, { name: 'Down', redirectUris: [CALLBACK], public: false, skipConsent: true, backchannelLogoutUri: down.url }, t.clock.now())
    const sender = new BackchannelLogout(t.ctx)
    await endedSessionWith(t, okApp, 'ok@example.com')
    await endedSessionWith(t, downApp, 'down@example.com')
    expect(await sender.tick()).toBe(2)
    // The app that is down is given up after 24 h; a third delivery is still waiting then.
    for (let i = 0; i < 200 && (await t.store.sessions.logoutCounts()).failed === 0; i++) {
      t.clock.advance(600_000)
      await sender.tick()
    }
    down.server.stop(true)
    await endedSessionWith(t, downApp, 'later@example.com')
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 1, sent: 1, failed: 1 })
    const week = 7 * 86_400_000
    const windows = { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 0, mail: week, settingChanges: 0, sessionIdle: 86_400_000 * 365 }
    const sentAt = Number((await t.row('SELECT sent_at FROM logout_deliveries WHERE sent_at IS NOT NULL'))!.sent_at)
    await t.store.purgeExpired(sentAt + week, windows)
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 1, sent: 1, failed: 1 })
    await t.store.purgeExpired(sentAt + week + 1, windows)
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 1, sent: 0, failed: 1 })
    const failedAt = Number((await t.row('SELECT failed_at FROM logout_deliveries WHERE failed_at IS NOT NULL'))!.failed_at)
    await t.store.purgeExpired(failedAt + week + 1, windows)
    expect(await t.store.sessions.logoutCounts()).toEqual({ waiting: 1, sent: 0, failed: 0 })
  })
})
