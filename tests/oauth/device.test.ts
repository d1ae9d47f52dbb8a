import { beforeEach, describe, expect, spyOn, test } from 'bun:test'
import type { PgStore } from '../../src/db/pg/store'
import type { SqliteStore } from '../../src/db/sqlite/store'
import type { Store } from '../../src/db/store'
import { sha256 } from '../../src/lib/crypto'
import { createClient, DEVICE_CODE } from '../../src/oauth/clients'
import { addClient, addUser, cookieHeader, csrfFrom, ORIGIN, postForm, signIn, type TestApp, createTestApp } from '../helpers'

/** Issue 38, the device authorization grant (RFC 8628; SPEC "Machines and devices"). */
let t: TestApp
let tv: string
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/

beforeEach(async () => {
  t = await createTestApp()
  await addUser(t)
  tv = (await createClient(t.store, { name: 'Living-room TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
})

const post = (path: string, fields: Record<string, string>) => t.handle(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })
async function start(scope = 'openid email') {
  const res = await post('/api/oauth/device_authorization', { client_id: tv, scope })
  expect(res.status).toBe(200)
  expect(res.headers.get('cache-control')).toBe('no-store')
  return (await res.json()) as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number }
}
const poll = (deviceCode: string, clientId = tv) => post('/api/oauth/token', { grant_type: DEVICE_CODE, device_code: deviceCode, client_id: clientId })
async function pollError(deviceCode: string, error: string) {
  const res = await poll(deviceCode)
  expect(res.status).toBe(400)
  expect(((await res.json()) as { error: string }).error).toBe(error)
}
async function decide(jar: Record<string, string>, userCode: string, decision: 'allow' | 'deny') {
  const page = await t.handle(`/device?user_code=${userCode}`, { headers: { cookie: cookieHeader(jar) } })
  expect(page.status).toBe(200)
  const html = await page.text()
  return { html, res: await postForm(t, '/device', { user_code: userCode, decision, csrf_token: csrfFrom(html) }, jar) }
}

describe('POST /api/oauth/device_authorization', () => {
  test('{device_code, user_code XXXX-XXXX, verification_uri ISSUER/device, …_complete, expires_in 600, interval 5}', async () => {
    const body = await start()
    expect(body.user_code).toMatch(USER_CODE)
    expect(body).toMatchObject({ verification_uri: `${ORIGIN}/device`, verification_uri_complete: `${ORIGIN}/device?user_code=${body.user_code}`, expires_in: 600, interval: 5 })
    expect(body.device_code.length).toBeGreaterThan(40)
  })

  test('an app not given the grant: unauthorized_client; a bad scope: invalid_scope; nothing stored', async () => {
    const web = await addClient(t)
    const res = await post('/api/oauth/device_authorization', { client_id: web.client.id, client_secret: web.secret, scope: 'openid' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('unauthorized_client')
    const bad = await post('/api/oauth/device_authorization', { client_id: tv, scope: 'nonsense' })
    expect(((await bad.json()) as { error: string }).error).toBe('invalid_scope')
    expect(Number((await t.row('SELECT count(*) AS n FROM device_codes'))!.n)).toBe(0)
  })
})

test('a client has at most 100 requests pending: the 101st is 429 slow_down with Retry-After, nothing stored; a decision or expiry frees a place; other clients are not held up', async () => {
  const started = []
  for (let i = 0; i < 100; i++) started.push(await start())
  const over = await post('/api/oauth/device_authorization', { client_id: tv, scope: 'openid' })
  expect(over.status).toBe(429)
  expect(over.headers.get('retry-after')).toBe('60')
  expect(((await over.json()) as { error: string }).error).toBe('slow_down')
  expect(Number((await t.row('SELECT count(*) AS n FROM device_codes'))!.n)).toBe(100)
  const other = (await createClient(t.store, { name: 'Other TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
  expect((await post('/api/oauth/device_authorization', { client_id: other, scope: 'openid' })).status).toBe(200)
  await decide(await signIn(t), started[0]!.user_code, 'deny')
  await start()
  expect((await post('/api/oauth/device_authorization', { client_id: tv, scope: 'openid' })).status).toBe(429)
  t.clock.advance(600_001)
  await start()
})

test('requests sent at once cannot pass the cap: of 20 in parallel with 90 pending, exactly 10 are stored', async () => {
  for (let i = 0; i < 90; i++) await start()
  const answers = await Promise.all(Array.from({ length: 20 }, () => post('/api/oauth/device_authorization', { client_id: tv, scope: 'openid' })))
  expect(answers.filter((r) => r.status === 200).length).toBe(10)
  expect(answers.filter((r) => r.status === 429).length).toBe(10)
})

describe('polling and /device', () => {
  test('pending, slow_down (interval +5 s), the user signs in and allows, then the tokens once (refresh token, id_token)', async () => {
    const { device_code, user_code } = await start()
    await pollError(device_code, 'authorization_pending')
    await pollError(device_code, 'slow_down')
    t.clock.advance(9_000)
    // The interval is 10 s now: 9 s after the last poll is still too soon, and it grows to 15 s.
    await pollError(device_code, 'slow_down')
    t.clock.advance(14_000)
    await pollError(device_code, 'slow_down')
    t.clock.advance(20_000)
    await pollError(device_code, 'authorization_pending')

    // Typed in lower case without the hyphen; not signed in: /login, returning here.
    const typed = user_code.replace('-', '').toLowerCase()
    const anonymous = await t.handle(`/device?user_code=${typed}`)
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(`/device?user_code=${user_code}`)}`)
    const jar = await signIn(t)
    const { html, res } = await decide(jar, typed, 'allow')
    expect(html).toContain('Living-room TV')
    expect(html).toContain('Only continue if you started this yourself, on a device in front of you')
    expect(html).toContain('See your email address')
    // Started in-process, without a socket peer: the server could not learn the address, and says so.
    expect(html).toMatch(/Requested <time datetime="[^"]+">[^<]+<\/time>, from an address the server could not learn\./)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Device connected')

    t.clock.advance(20_000)
    const tokens = await poll(device_code)
    expect(tokens.status).toBe(200)
    const body = (await tokens.json()) as Record<string, string>
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'openid email' })
    expect(body.refresh_token).toBeTruthy()
    expect(body.id_token).toBeTruthy()
    const userinfo = await t.handle('/api/oauth/userinfo', { headers: { authorization: `Bearer ${body.access_token}` } })
    expect(((await userinfo.json()) as { email: string }).email).toBe('ann@example.com')
    // Once: the next poll is invalid_grant, and the code cannot be typed again.
    t.clock.advance(20_000)
    await pollError(device_code, 'invalid_grant')
    expect((await t.handle(`/device?user_code=${user_code}`, { headers: { cookie: cookieHeader(jar) } })).status).toBe(400)
    // The refresh token refreshes (the device grant comes with refresh).
    const refreshed = await post('/api/oauth/token', { grant_type: 'refresh_token', refresh_token: body.refresh_token!, client_id: tv })
    expect(refreshed.status).toBe(200)
  })

  test('a poll that finds nothing writes nothing (it costs a read, as userinfo does); slow_down and the interval it grows are written, for every instance', async () => {
    const { device_code } = await start()
    const stored = async () => {
      const row = (await t.row('SELECT last_polled_at AS at, interval FROM device_codes'))!
      return { at: row.at === null ? null : Number(row.at), interval: Number(row.interval) }
    }
    await pollError(device_code, 'authorization_pending')
    expect(await stored()).toEqual({ at: null, interval: 5 })
    t.clock.advance(6_000)
    await pollError(device_code, 'authorization_pending')
    expect(await stored()).toEqual({ at: null, interval: 5 })
    t.clock.advance(1_000)
    await pollError(device_code, 'slow_down')
    expect(await stored()).toEqual({ at: t.clock.now(), interval: 10 })
  })

  test('Deny: access_denied; an expired code: expired_token; another client: invalid_grant', async () => {
    const denied = await start()
    const jar = await signIn(t)
    const { res } = await decide(jar, denied.user_code, 'deny')
    expect(await res.text()).toContain('Access denied')
    await pollError(denied.device_code, 'access_denied')
    const late = await start()
    const other = (await createClient(t.store, { name: 'Other TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
    const stolen = await poll(late.device_code, other)
    expect(((await stolen.json()) as { error: string }).error).toBe('invalid_grant')
    t.clock.advance(600_001)
    await pollError(late.device_code, 'expired_token')
  })

  test('token.issued is written in the exchange’s own transaction: with the audit writer down, the poll gets its tokens and the event is there', async () => {
    const ann = (await t.store.users.findUserByEmail('ann@example.com'))!
    const { device_code, user_code } = await start()
    await decide(await signIn(t), user_code, 'allow')
    t.store.audit.record = () => Promise.reject(new Error('audit writer down'))
    expect((await poll(device_code)).status).toBe(200)
    const [issued] = await t.store.audit.list({ limit: 1 })
    expect([issued!.kind, issued!.userId, issued!.clientId, JSON.parse(issued!.detail!)]).toEqual(['token.issued', ann.id, tv, { grant: 'device_code', scope: 'openid email' }])
  })

  test('consent is recorded only by the decision that counts: of an Allow and a Deny sent at once, a losing Allow records no consent and issues no code', async () => {
    const jar = await signIn(t)
    const ann = (await t.store.users.findUserByEmail('ann@example.com'))!
    for (let round = 0; round < 4; round++) {
      const app = (await createClient(t.store, { name: `TV ${round}`, redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
      const res = await post('/api/oauth/device_authorization', { client_id: app, scope: 'openid email' })
      const { device_code, user_code } = (await res.json()) as { device_code: string; user_code: string }
      const csrf = csrfFrom(await (await t.handle(`/device?user_code=${user_code}`, { headers: { cookie: cookieHeader(jar) } })).text())
      const [denied, allowed] = await Promise.all(['deny', 'allow'].map((decision) => postForm(t, '/device', { user_code, decision, csrf_token: csrf }, jar)))
      // Exactly one decision counts; the other is told so (decided already, or, when it came later, no longer pending).
      expect([denied!.status, allowed!.status].sort()).toEqual([200, 400])
      const allowWon = allowed!.status === 200
      expect(await (allowWon ? denied! : allowed!).text()).toMatch(/This code was allowed or denied already\.|That code is not valid, or it has expired/)
      expect(await t.store.grants.grantedScope(ann.id, app, null)).toEqual(allowWon ? ['openid', 'email'] : [])
      expect(Number((await t.row(`SELECT count(*) AS n FROM auth_codes WHERE client_id = '${app}'`))!.n)).toBe(allowWon ? 1 : 0)
      const events = (await t.store.audit.list({ limit: 100 })).filter((e) => e.kind === 'consent.granted' && e.clientId === app)
      expect(events.length).toBe(allowWon ? 1 : 0)
      const polled = await post('/api/oauth/token', { grant_type: DEVICE_CODE, device_code, client_id: app })
      expect(polled.status).toBe(allowWon ? 200 : 400)
    }
  })

  test('a pending code this instance issued is never read by its polls that find nothing (held from its insert); one it did not issue is read once; a decision on this instance reaches the next poll (Deny, Allow)', async () => {
    const denied = await start()
    const allowed = await start()
    const reads = countReads(t.store)
    try {
      for (const { device_code } of [denied, allowed]) await pollError(device_code, 'authorization_pending')
      for (let i = 0; i < 3; i++) {
        t.clock.advance(5_000)
        for (const { device_code } of [denied, allowed]) await pollError(device_code, 'authorization_pending')
      }
      expect(reads()).toBe(0)
      const jar = await signIn(t)
      await decide(jar, denied.user_code, 'deny')
      t.clock.advance(5_000)
      await pollError(denied.device_code, 'access_denied')
      await decide(jar, allowed.user_code, 'allow')
      t.clock.advance(5_000)
      expect((await poll(allowed.device_code)).status).toBe(200)
      // The other reads were the decisions' and the exchange's, not a poll's that found nothing.
      expect(reads()).toBeGreaterThan(0)
    } finally {
      reads.restore()
    }
    // Issued elsewhere (another instance, or before a restart: inserted behind this one's back): its first poll reads it, the next ones do not.
    const other = 'lk_dc_issued-by-another-instance'
    await t.rows(
      `INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address) VALUES (?, ?, ?, 'openid', NULL, ?, ?, 5, 'pending', '192.0.2.1')`,
      sha256(other), sha256('another user code'), tv, t.clock.now(), t.clock.now() + 600_000,
    )
    const later = countReads(t.store)
    try {
      await pollError(other, 'authorization_pending')
      expect(later()).toBe(1)
      t.clock.advance(5_000)
      await pollError(other, 'authorization_pending')
      expect(later()).toBe(1)
    } finally {
      later.restore()
    }
  })

  test('an expired code held in memory is let go when the purge deletes it: expired_token while its row is there, invalid_grant after', async () => {
    const { device_code } = await start()
    await pollError(device_code, 'authorization_pending')
    t.clock.advance(600_001)
    await pollError(device_code, 'expired_token')
    await t.store.purgeExpired(t.clock.now(), { usedCodes: 3600_000, throttle: 3600_000, refreshGrace: 10_000, retiredKeys: 3600_000, mail: 7 * 24 * 3600_000, settingChanges: 30 * 86_400_000 })
    expect(Number((await t.row('SELECT count(*) AS n FROM device_codes'))!.n)).toBe(0)
    // On PostgreSQL the purge's DELETE is told by its trigger's NOTIFY (drizzle/pg/0027): asked until it arrived.
    const began = performance.now()
    let error = ''
    while ((error = ((await (await poll(device_code)).json()) as { error: string }).error) !== 'invalid_grant' && performance.now() - began < 1000) await Bun.sleep(5)
    expect(error).toBe('invalid_grant')
  })

  test('two polls at once after Allow: exactly one gets the tokens', async () => {
    const { device_code, user_code } = await start()
    await decide(await signIn(t), user_code, 'allow')
    const answers = await Promise.all([poll(device_code), poll(device_code), poll(device_code)])
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400])
    expect(Number((await t.row('SELECT count(*) AS n FROM refresh_families'))!.n)).toBe(1)
  })

  test('a decision without its CSRF token is refused and changes nothing', async () => {
    const { device_code, user_code } = await start()
    const jar = await signIn(t)
    const res = await postForm(t, '/device', { user_code, decision: 'allow' }, jar)
    expect(res.status).toBe(403)
    await pollError(device_code, 'authorization_pending')
  })

  test('wrong codes: 10 a minute per client address, then 429 with Retry-After (even for a right code)', async () => {
    const { user_code } = await start()
    for (let i = 0; i < 10; i++) expect((await t.handle('/device?user_code=BBBB-BBBB')).status).toBe(400)
    const blocked = await t.handle(`/device?user_code=${user_code}`)
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    t.clock.advance(60_000)
    expect((await t.handle(`/device?user_code=${user_code}`)).status).toBe(303)
  })

  test('wrong codes sent at the same moment cannot pass the limit: of 50 in parallel, at most 10 are looked up', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => t.handle('/device?user_code=BBBB-BBBB')))
    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s === 400).length).toBe(10)
    expect(statuses.filter((s) => s === 429).length).toBe(40)
  })

  test('/device without a code asks for it; discovery names the endpoint and the grant', async () => {
    const page = await t.handle('/device')
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('name="user_code"')
    const doc = (await (await t.handle('/.well-known/openid-configuration')).json()) as Record<string, unknown>
    expect(doc.device_authorization_endpoint).toBe(`${ORIGIN}/api/oauth/device_authorization`)
    expect(doc.grant_types_supported).toContain(DEVICE_CODE)
  })
})

/**
 * The store's reads of device codes from here on: SQLite's statement that finds one by its hash;
 * on PostgreSQL every operation (a poll that finds nothing makes none: its client is cached too).
 */
function countReads(store: Store): (() => number) & { restore: () => void } {
  let n = 0
  if (store.engine === 'sqlite') {
    const sqlite = (store as SqliteStore).db.sqlite
    const query = sqlite.query.bind(sqlite)
    const spy = spyOn(sqlite, 'query').mockImplementation(((sql: string) => {
      if (sql.includes('FROM device_codes WHERE device_code_hash')) n++
      return query(sql)
    }) as typeof sqlite.query)
    return Object.assign(() => n, { restore: () => spy.mockRestore() })
  }
  const pg = store as PgStore
  const run = pg.run.bind(pg)
  const spy = spyOn(pg, 'run').mockImplementation(((fn: Parameters<PgStore['run']>[0]) => (n++, run(fn))) as PgStore['run'])
  return Object.assign(() => n, { restore: () => spy.mockRestore() })
}
