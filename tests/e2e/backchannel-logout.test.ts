/**
 * Back-channel logout end to end (issue 34; SPEC "Your account and your sessions"; OpenID Connect
 * Back-Channel Logout 1.0): the compiled binary, a relying party of our own that verifies every
 * logout token with jose against the binary's JWKS, and each way a session ends. Each way runs on
 * users of its own, concurrently, against one binary; then two instances on PostgreSQL behind haproxy.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose'
import { startHaproxy, type Balancer } from '../haproxy'
import { TestSmtp, linkIn, subjectOf } from '../mail/smtp'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'
import { until } from '../wait'
import { CookieClient, freePort, startBinary, type RunningBinary } from './server'

// A binary, an SMTP server and a dozen sign-ins at once on a shared machine.
setDefaultTimeout(90_000)

const CALLBACK = 'http://127.0.0.1:9/callback'
const PASSWORD = 'bcl password 1'
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

interface App {
  name: string
  client_id: string
  client_secret: string
}
/** A logout token as the relying party verified it. */
interface Heard {
  app: string
  sub: string
  sid: string
  jti: string
}

/**
 * The relying party's back-channel endpoints, one path per app (`/bc/NAME`): each POST's
 * logout_token is verified as §2.6 asks — signature against the issuer's JWKS, typ logout+jwt,
 * iss, aud (this app), iat, exp two minutes later, jti, sub, sid, the event, no nonce — then
 * answered 200; anything else is recorded as rejected and answered 400.
 */
class RelyingParty {
  readonly heard: Heard[] = []
  readonly rejected: string[] = []
  /** Paths whose next answers wait for this (a slow app). */
  readonly holds = new Map<string, Promise<void>>()
  readonly arrived = new Map<string, number>()
  /** Paths that answer 503 this many times first (an app that is down). */
  readonly unavailable = new Map<string, number>()
  private readonly apps = new Map<string, App>()
  private readonly server: ReturnType<typeof Bun.serve>
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined
  private issuer = ''

  constructor(port = 0) {
    this.server = Bun.serve({ hostname: '127.0.0.1', port, fetch: (request) => this.receive(request) })
  }

  get origin() {
    return `http://127.0.0.1:${this.server.port}`
  }

  trust(issuer: string) {
    this.issuer = issuer
    this.jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`))
  }

  add(app: App) {
    this.apps.set(app.name, app)
  }

  stop() {
    this.server.stop(true)
  }

  private async receive(request: Request): Promise<Response> {
    const name = new URL(request.url).pathname.replace(/^\/bc\//, '')
    this.arrived.set(name, (this.arrived.get(name) ?? 0) + 1)
    await this.holds.get(name)
    const down = this.unavailable.get(name) ?? 0
    if (down > 0) {
      this.unavailable.set(name, down - 1)
      return new Response('down for maintenance', { status: 503 })
    }
    const app = this.apps.get(name)
    try {
      if (request.method !== 'POST' || !app) throw new Error(`${request.method} to an unknown app ${name}`)
      if (request.headers.get('content-type') !== 'application/x-www-form-urlencoded') throw new Error(`content-type ${request.headers.get('content-type')}`)
      const token = new URLSearchParams(await request.text()).get('logout_token') ?? ''
      const { payload } = await jwtVerify(token, this.jwks!, { issuer: this.issuer, audience: app.client_id, typ: 'logout+jwt', requiredClaims: ['iat', 'exp', 'jti', 'sub', 'sid', 'events'] })
      checkLogoutClaims(payload)
      this.heard.push({ app: name, sub: payload.sub!, sid: payload.sid as string, jti: payload.jti! })
      return new Response(null, { status: 200 })
    } catch (error) {
      this.rejected.push(`${name}: ${(error as Error).message}`)
      return new Response(null, { status: 400 })
    }
  }
}

/** §2.4 and §2.6 beyond what jwtVerify checked: the event, no nonce, a two-minute life. */
function checkLogoutClaims(payload: JWTPayload) {
  const events = payload.events as Record<string, unknown>
  if (JSON.stringify(events) !== JSON.stringify({ [LOGOUT_EVENT]: {} })) throw new Error(`events ${JSON.stringify(events)}`)
  if ('nonce' in payload) throw new Error('a nonce')
  if (payload.exp! - payload.iat! !== 120) throw new Error(`exp - iat = ${payload.exp! - payload.iat!}`)
  if (Math.abs(payload.iat! - Date.now() / 1000) > 60) throw new Error(`iat ${payload.iat} is not now`)
  if (!/^[A-Za-z0-9_-]{43}$/.test(payload.jti!)) throw new Error(`jti ${payload.jti}`)
}

async function form(browser: CookieClient, path: string, fields: Record<string, string>, page = path) {
  const html = await (await browser.fetch(page)).text()
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1]
  if (!csrf) throw new Error(`no CSRF token on ${page}`)
  return browser.fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...fields, csrf_token: csrf }) })
}

function createApp(server: RunningBinary, rp: RelyingParty, name: string, uri = `${rp.origin}/bc/${name}`): App {
  const r = server.cli(['client', 'create', '--name', name, '--redirect-uri', CALLBACK, '--skip-consent', '--backchannel-logout-uri', uri])
  if (r.code !== 0) throw new Error(r.err)
  const app = { name, ...(JSON.parse(r.out) as { client_id: string; client_secret: string }) }
  rp.add(app)
  return app
}

function createUser(server: RunningBinary, email: string, admin = false) {
  const r = server.cli(['user', 'create', '--email', email, '--name', email.split('@')[0]!, '--password-stdin', ...(admin ? ['--admin'] : [])], `${PASSWORD}\n`)
  if (r.code !== 0) throw new Error(r.err)
  return (JSON.parse(r.out) as { id: string }).id
}

/** A new account through /signup (no CLI run: a spawn would stall this process, the relying party's too); the browser is signed in. */
async function signUp(base: string, email: string): Promise<CookieClient> {
  const browser = new CookieClient(base)
  const res = await form(browser, '/signup', { full_name: email.split('@')[0]!, email, password: PASSWORD })
  if (res.status !== 303) throw new Error(`sign-up of ${email} answered ${res.status}`)
  return browser
}

async function signIn(base: string, email: string, password = PASSWORD): Promise<CookieClient> {
  const browser = new CookieClient(base)
  const res = await form(browser, '/login', { email, password })
  if (res.status !== 303) throw new Error(`sign-in of ${email} answered ${res.status}`)
  return browser
}

/**
 * The browser signs in to the app (authorization code) and the app exchanges the code: with
 * `openid`, the id_token (verified against the JWKS) and its sid; without, no id_token at all.
 */
async function appSignIn(server: { url: string }, browser: CookieClient, app: App, scope = 'openid'): Promise<{ sid?: string; sub?: string }> {
  const nonce = crypto.randomUUID()
  const query = new URLSearchParams({ client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope, state: 's', nonce })
  const authorized = await browser.fetch(`/oauth/authorize?${query}`)
  const code = new URL(authorized.headers.get('location') ?? 'http://x/').searchParams.get('code')
  if (authorized.status !== 303 || !code) throw new Error(`authorize answered ${authorized.status} ${authorized.headers.get('location')}`)
  const res = await fetch(`${server.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }),
  })
  const body = (await res.json()) as { id_token?: string }
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status} ${JSON.stringify(body)}`)
  if (!scope.split(' ').includes('openid')) {
    expect(body.id_token).toBeUndefined()
    return {}
  }
  const { payload } = await jwtVerify(body.id_token!, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)), { issuer: server.url, audience: app.client_id })
  expect(payload.nonce).toBe(nonce)
  expect(payload.sid).toMatch(/^[A-Za-z0-9_-]{43}$/)
  return { sid: payload.sid as string, sub: payload.sub! }
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ')

/**
 * Waits until every delivery of these sessions is stamped sent (after its POST was answered, so
 * no further attempt can follow), then: each app that got an id_token in a session heard of it
 * exactly once, and no other app did.
 */
async function expectHeardOnce(server: RunningBinary, rp: RelyingParty, sessions: { sid: string; sub: string }[], apps: string[]) {
  const sids = sessions.map((s) => s.sid)
  const rows = () => server.query(`SELECT client_id, sid, attempts, sent_at FROM logout_deliveries WHERE sid IN (${placeholders(sids.length)})`, ...sids)
  await until(async () => {
    const all = await rows()
    return sids.every((sid) => all.some((r) => r.sid === sid)) && all.every((r) => r.sent_at !== null)
  }, `the logouts of ${sids.length} session(s) delivered`)
  for (const { sid, sub } of sessions) {
    const heard = rp.heard.filter((h) => h.sid === sid)
    expect(heard.map((h) => h.app).sort()).toEqual([...apps].sort())
    for (const h of heard) expect(h.sub).toBe(sub)
  }
  expect((await rows()).length).toBe(sids.length * apps.length)
  expect(rp.rejected).toEqual([])
}

function expectNotHeard(rp: RelyingParty, sids: (string | undefined)[]) {
  for (const sid of sids) expect(rp.heard.filter((h) => h.sid === sid)).toEqual([])
}

describe('back-channel logout from the binary to a relying party that verifies each token', () => {
  let smtp: TestSmtp
  let server: RunningBinary
  let rp: RelyingParty
  let wiki: App
  let photos: App
  let notes: App
  let admin: CookieClient
  // Apps of single tests, made before them (a CLI run blocks this process, and so the relying party).
  let slow: App
  let busy: App
  let late: App
  let latePort: number

  beforeAll(async () => {
    smtp = await TestSmtp.start()
    rp = new RelyingParty()
    server = await startBinary({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Latchkey <id@example.com>',
      NODE_EXTRA_CA_CERTS: smtp.tls.certPath,
      NEW_DEVICE_EMAIL: 'off',
      LOGIN_ATTEMPTS_PER_MINUTE: '1000',
      SIGNUP: 'open',
      // An app that is down is tried again after 1 s (then 2, 4 …): the retry test waits for it, not 30 s.
      BACKCHANNEL_LOGOUT_RETRY: '1',
    })
    rp.trust(server.url)
    // Two apps that get id_tokens; a third, with a URI too, that only ever gets access tokens.
    ;[wiki, photos, notes] = ['wiki', 'photos', 'notes'].map((name) => createApp(server, rp, name)) as [App, App, App]
    ;[slow, busy] = ['slow', 'busy'].map((name) => createApp(server, rp, name)) as [App, App]
    latePort = await freePort()
    late = createApp(server, rp, 'late', `http://127.0.0.1:${latePort}/bc/late`)
    createUser(server, 'root@example.com', true)
    admin = await signIn(server.url, 'root@example.com')
  })

  afterAll(async () => {
    rp?.stop()
    server?.cleanup()
    await smtp?.down()
  })

  /** A user signed in from `n` browsers; in each, wiki and photos got an id_token, notes an access token only. */
  async function userWithSessions(email: string, n: number) {
    const browsers = [await signUp(server.url, email), ...(await Promise.all(Array.from({ length: n - 1 }, () => signIn(server.url, email))))]
    const sessions = await Promise.all(
      browsers.map(async (browser) => {
        const [w, p] = [await appSignIn(server, browser, wiki), await appSignIn(server, browser, photos)]
        await appSignIn(server, browser, notes, 'email')
        expect(p.sid).toBe(w.sid) // one sid per sign-in session, the same for every app
        expect(p.sub).toBe(w.sub)
        return { browser, sid: w.sid!, sub: w.sub! }
      }),
    )
    expect(new Set(sessions.map((x) => x.sub)).size).toBe(1)
    return { id: sessions[0]!.sub, sessions }
  }

  const bothApps = ['photos', 'wiki']

  test('discovery says backchannel_logout_supported and backchannel_logout_session_supported', async () => {
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
    expect([doc.backchannel_logout_supported, doc.backchannel_logout_session_supported]).toEqual([true, true])
  })

  test.concurrent('Sign out (POST /logout): that session, to each app that got an id_token in it', async () => {
    const { sessions } = await userWithSessions('logout@example.com', 2)
    const [laptop, phone] = sessions as [(typeof sessions)[0], (typeof sessions)[0]]
    expect((await form(laptop.browser, '/logout', {}, '/account')).status).toBe(303)
    await expectHeardOnce(server, rp, [laptop], bothApps)
    expectNotHeard(rp, [phone.sid])
    expect((await phone.browser.fetch('/account')).status).toBe(200)
  })

  test.concurrent('/account "Sign out" of one session: only that one', async () => {
    const { sessions } = await userWithSessions('one@example.com', 2)
    const [laptop, phone] = sessions as [(typeof sessions)[0], (typeof sessions)[0]]
    expect((await form(laptop.browser, '/account/sessions/sign-out', { session: phone.sid }, '/account')).status).toBe(303)
    await expectHeardOnce(server, rp, [phone], bothApps)
    expectNotHeard(rp, [laptop.sid])
  })

  test.concurrent('/account "Sign out everywhere else": every other session', async () => {
    const { sessions } = await userWithSessions('others@example.com', 3)
    const [laptop, ...others] = sessions
    expect((await form(laptop!.browser, '/account/sessions/sign-out-others', {}, '/account')).status).toBe(303)
    await expectHeardOnce(server, rp, others, bothApps)
    expectNotHeard(rp, [laptop!.sid])
  })

  test.concurrent('RP-initiated logout (end_session with id_token_hint)', async () => {
    const browser = await signUp(server.url, 'rpinit@example.com')
    const query = new URLSearchParams({ client_id: wiki.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', state: 's' })
    const code = new URL((await browser.fetch(`/oauth/authorize?${query}`)).headers.get('location')!).searchParams.get('code')!
    const tokens = (await (
      await fetch(`${server.url}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${wiki.client_id}:${wiki.client_secret}`)}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }),
      })
    ).json()) as { id_token: string }
    const { payload } = await jwtVerify(tokens.id_token, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)), { issuer: server.url, audience: wiki.client_id })
    const hint = `/oauth/logout?id_token_hint=${tokens.id_token}`
    expect((await form(browser, '/oauth/logout', { id_token_hint: tokens.id_token }, hint)).status).toBe(200)
    await expectHeardOnce(server, rp, [{ sid: payload.sid as string, sub: payload.sub! }], ['wiki'])
  })

  test.concurrent('an admin\'s "Sign out everywhere" on /admin: every session', async () => {
    const { id, sessions } = await userWithSessions('byadmin@example.com', 2)
    expect((await form(admin, '/admin/users/sign-out', { user_id: id, confirmed: 'yes' }, '/admin/users')).status).toBe(303)
    await expectHeardOnce(server, rp, sessions, bothApps)
  })

  test.concurrent('disabling the user (CLI): every session', async () => {
    const { sessions } = await userWithSessions('disabled@example.com', 2)
    expect(server.cli(['user', 'update', 'disabled@example.com', '--disabled', 'true']).code).toBe(0)
    await expectHeardOnce(server, rp, sessions, bothApps)
  })

  test.concurrent('deleting the user (CLI): every session', async () => {
    const { sessions } = await userWithSessions('deleted@example.com', 2)
    expect(server.cli(['user', 'delete', 'deleted@example.com']).code).toBe(0)
    await expectHeardOnce(server, rp, sessions, bothApps)
  })

  test.concurrent('"Delete my account" on /account: every session', async () => {
    const { sessions } = await userWithSessions('leaving@example.com', 2)
    expect((await form(sessions[0]!.browser, '/account/delete', { password: PASSWORD })).status).toBe(200)
    await expectHeardOnce(server, rp, sessions, bothApps)
  })

  test.concurrent('a password reset through the mailed link: every session', async () => {
    const { sessions } = await userWithSessions('forgetful@example.com', 2)
    const anonymous = new CookieClient(server.url)
    expect((await form(anonymous, '/forgot-password', { email: 'forgetful@example.com' })).status).toBe(200)
    let link = ''
    await until(() => {
      const mail = smtp.received.find((m) => m.to.includes('forgetful@example.com') && subjectOf(m.raw) === 'Reset your password')
      link = mail ? linkIn(mail.raw) : ''
      return link !== ''
    }, 'the reset link by mail')
    const path = link.slice(server.url.length)
    expect((await form(anonymous, '/reset-password', { token: new URL(link).searchParams.get('token')!, password: 'a brand new password' }, path)).status).toBe(200)
    await expectHeardOnce(server, rp, sessions, bothApps)
  })

  test.concurrent('a password change on /account: every other session', async () => {
    const { sessions } = await userWithSessions('changer@example.com', 3)
    const [here, ...others] = sessions
    const res = await form(here!.browser, '/account/password/change', { current_password: PASSWORD, new_password: 'another long password' }, '/account')
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Your password was changed.')
    await expectHeardOnce(server, rp, others, bothApps)
    expectNotHeard(rp, [here!.sid])
  })

  test.concurrent('signing in again in the same browser (an app\'s prompt=login) ends nothing: no token then, one at the sign-out', async () => {
    const { sessions } = await userWithSessions('again@example.com', 1)
    const [only] = sessions as [(typeof sessions)[0]]
    const page = await (await only.browser.fetch('/login?reauth=1')).text()
    expect(page).toContain('name="password"')
    expect((await form(only.browser, '/login', { email: 'again@example.com', password: PASSWORD }, '/login?reauth=1')).status).toBe(303)
    // The same session under a new cookie: the same sid in the next id_token, nothing queued for it.
    expect((await appSignIn(server, only.browser, wiki)).sid).toBe(only.sid)
    expect(await server.query('SELECT client_id FROM logout_deliveries WHERE sid = ?', only.sid)).toEqual([])
    expect((await form(only.browser, '/logout', {}, '/account')).status).toBe(303)
    await expectHeardOnce(server, rp, [only], bothApps)
  })

  test.concurrent('a slow app never slows the sign-out: the sign-out answers while the app still holds the POST', async () => {
    const browser = await signUp(server.url, 'patient@example.com')
    const session = await appSignIn(server, browser, slow)
    let release!: () => void
    rp.holds.set('slow', new Promise<void>((r) => (release = r)))
    // Were the POST on the request path, the sign-out would wait for the app, which waits for this test: a deadlock.
    expect((await form(browser, '/logout', {}, '/account')).status).toBe(303)
    await until(() => (rp.arrived.get('slow') ?? 0) === 1, 'the POST to the slow app')
    release()
    await expectHeardOnce(server, rp, [{ sid: session.sid!, sub: session.sub! }], ['slow'])
  })

  test.concurrent('an app that answers 503 at first receives the logout token on the retry', async () => {
    rp.unavailable.set('busy', 1)
    const browser = await signUp(server.url, 'busy@example.com')
    const session = await appSignIn(server, browser, busy)
    expect((await form(browser, '/logout', {}, '/account')).status).toBe(303)
    await expectHeardOnce(server, rp, [{ sid: session.sid!, sub: session.sub! }], ['busy'])
    expect(rp.arrived.get('busy')).toBe(2)
    expect(await server.query('SELECT attempts, last_error FROM logout_deliveries WHERE sid = ?', session.sid)).toEqual([{ attempts: 2, last_error: 'answered 503' }])
  })

  test.concurrent('an app that is down at first (nothing listening) receives the logout token once it is back', async () => {
    const browser = await signUp(server.url, 'late@example.com')
    const session = await appSignIn(server, browser, late)
    expect((await form(browser, '/logout', {}, '/account')).status).toBe(303)
    const row = async () => (await server.query('SELECT attempts, last_error, sent_at FROM logout_deliveries WHERE sid = ?', session.sid))[0]!
    await until(async () => Number((await row()).attempts) >= 1, 'a failed attempt at the app that is down')
    expect((await row()).sent_at).toBeNull()
    expect(String((await row()).last_error)).toMatch(/connect/i)
    // The app comes up (its own RP on that port, verifying against the same JWKS).
    const back = new RelyingParty(latePort)
    try {
      back.trust(server.url)
      back.add(late)
      await expectHeardOnce(server, back, [{ sid: session.sid!, sub: session.sub! }], ['late'])
      expect(Number((await row()).attempts)).toBeGreaterThanOrEqual(2)
      expect(back.rejected).toEqual([])
    } finally {
      back.stop()
    }
  })
})

describe.skipIf(testEngine !== 'postgres')('two instances on one PostgreSQL database behind haproxy (PostgreSQL only)', () => {
  let a: RunningBinary
  let b: RunningBinary
  let lb: Balancer
  let rp: RelyingParty

  beforeAll(async () => {
    const lbPort = await freePort()
    const env = { DATABASE_URL: await freshPgDatabase(), ISSUER: `http://127.0.0.1:${lbPort}`, LOGIN_ATTEMPTS_PER_MINUTE: '1000', SIGNUP: 'open' }
    ;[a, b] = await Promise.all([startBinary(env), startBinary(env)])
    lb = await startHaproxy(lbPort, [a, b].map((s) => new URL(s.url).host))
    rp = new RelyingParty()
    rp.trust(lb.url)
  })

  afterAll(() => {
    rp?.stop()
    lb?.stop()
    a?.cleanup()
    b?.cleanup()
  })

  test('30 sign-outs through round-robin: each session\'s logout token delivered once', async () => {
    const through = { ...a, url: lb.url }
    const app = createApp(through, rp, 'wiki')
    const N = 30
    const sessions = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        // Signed up through the balancer (30 CLI runs would take longer than the test itself).
        const browser = await signUp(lb.url, `many${i}@example.com`)
        const { sid, sub } = await appSignIn(through, browser, app)
        return { browser, sid: sid!, sub: sub! }
      }),
    )
    // The sign-outs land on both instances; both senders work the one queue.
    const answers = await Promise.all(sessions.map((s) => form(s.browser, '/logout', {}, '/account')))
    expect(answers.map((r) => r.status)).toEqual(Array(N).fill(303))
    await expectHeardOnce(through, rp, sessions, ['wiki'])
    expect(rp.heard.length).toBe(N)
    expect(new Set(rp.heard.map((h) => h.jti)).size).toBe(N)
    expect(await a.query('SELECT count(*)::int AS n FROM logout_deliveries WHERE attempts <> 1')).toEqual([{ n: 0 }])
    expect(rp.rejected).toEqual([])
  })
})
