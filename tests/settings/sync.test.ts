import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { createContext } from '../../src/context'
import { loadConfig } from '../../src/config'
import { manualClock } from '../../src/lib/clock'
import { cookieHeader, createTestApp, csrfFrom, form, mintToken, signIn, type TestApp } from '../helpers'
import { openTestStorePair, testEngine } from '../store'
import { HEARTBEAT_MS } from '../../src/settings/hub'
import { api, settingsWorld } from './helpers'
import { SseReader, type SseEvent } from './sse'

let t: TestApp
let w: Awaited<ReturnType<typeof settingsWorld>>

beforeEach(async () => {
  t = await createTestApp()
  w = await settingsWorld(t)
})
afterEach(() => t.ctx.settingsHub.closeAll())

const json = async (res: Response) => (await res.json()) as any
const post = (token: string, key: string, value: unknown, clientId = w.appA.id) => api(t, token).post({ client_id: clientId, key, value })
const del = (token: string, key: string, clientId = w.appA.id) => api(t, token).del(key, `?client_id=${clientId}`)
const stream = (token: string | undefined, query = '', headers: Record<string, string> = {}) =>
  t.handle(`/api/settings-events${query}`, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } })
const data = (e: SseEvent | undefined) => JSON.parse(e!.data!)

async function expectError(res: Response, status: number, error: string, description?: string) {
  expect(res.status).toBe(status)
  const body = await json(res)
  expect(body.error).toBe(error)
  if (description !== undefined) expect(body.error_description).toBe(description)
  return res
}

describe('revisions: one per key changed, per (user, app), from 1', () => {
  test('GET /api/settings answers revision beside settings; writes and deletes count, per user and app', async () => {
    expect(await json(await api(t, w.annA).list())).toEqual({ settings: [], revision: 0 })
    await post(w.annA, 'a', 1)
    await post(w.annA, 'b', 2)
    await post(w.annA, 'a', 3)
    await del(w.annA, 'b')
    await post(w.annB, 'x', 1, w.appB.id) // another app of the same user
    await post(w.bobA, 'y', 1) // another user of the same app
    const list = await json(await api(t, w.annA).list())
    expect(list.revision).toBe(4)
    expect(list.settings.map((s: { key: string }) => s.key)).toEqual(['a'])
    expect((await json(await api(t, w.annB).list())).revision).toBe(1)
    expect((await json(await api(t, w.bobA).list())).revision).toBe(1)
    // A refused write takes no revision.
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'a', value: 4 }, { 'if-match': '"stale"' })).status).toBe(412)
    expect((await json(await api(t, w.annA).list())).revision).toBe(4)
  })

  test('racing writes get gap-free, unrepeated revisions', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => post(w.annA, `k${i}`, i)))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect((await json(await api(t, w.annA).list())).revision).toBe(200)
    // Each key was written once: the revisions its rows carry are every number from 1 to 200.
    const revisions = (await t.rows(`SELECT revision FROM settings WHERE user_id = '${w.ann.id}' AND client_id = '${w.appA.id}'`)).map((r) => Number((r as { revision: number }).revision))
    expect(revisions.sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
  })
})

describe('GET /api/settings?since=REV', () => {
  test('each key changed after REV once, at its latest state, in revision order; deletions as {key, deleted: true}', async () => {
    await post(w.annA, 'a', 1) // 1
    await post(w.annA, 'b', 1) // 2
    await post(w.annA, 'c', 1) // 3
    await post(w.annA, 'a', 2) // 4
    await del(w.annA, 'b') // 5
    await post(w.annA, 'c', 3) // 6
    const res = await api(t, w.annA).list('?since=1')
    expect(res.status).toBe(200)
    expect(await json(res)).toEqual({
      revision: 6,
      changes: [
        { key: 'a', value: 2, client_id: w.appA.id, updated_at: expect.any(String) },
        { key: 'b', deleted: true },
        { key: 'c', value: 3, client_id: w.appA.id, updated_at: expect.any(String) },
      ],
    })
    expect(await json(await api(t, w.annA).list('?since=6'))).toEqual({ revision: 6, changes: [] })
    expect(await json(await api(t, w.annA).list('?since=0'))).toMatchObject({ revision: 6, changes: [{ key: 'a' }, { key: 'b', deleted: true }, { key: 'c' }] })
  })

  test('since that is not a non-negative integer, or past the current revision: 400 invalid_request', async () => {
    await post(w.annA, 'a', 1)
    for (const since of ['abc', '-1', '1.5', '', '1e3', '01x', '9999999999999999'])
      await expectError(await api(t, w.annA).list(`?since=${encodeURIComponent(since)}`), 400, 'invalid_request')
    await expectError(await api(t, w.annA).list('?since=2'), 400, 'invalid_request', 'since 2 is past the current revision 1')
  })

  test('older than what is kept: 410 gone (fetch the list again)', async () => {
    await post(w.annA, 'a', 1) // 1
    await del(w.annA, 'a') // 2: a tombstone says a is gone
    await post(w.annA, 'b', 1) // 3
    t.clock.advance(31 * 86_400_000)
    const token = await mintToken(t, w.appA.id, w.ann.id)
    await post(token, 'c', 1) // 4
    const windows = { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 0, mail: 0, settingChanges: 30 * 86_400_000 }
    await t.store.purgeExpired(t.clock.now(), windows)
    // Who knew revision 1 would not learn that a was deleted: gone.
    await expectError(await api(t, token).list('?since=1'), 410, 'gone', 'changes after revision 1 are no longer kept; fetch the settings again')
    await expectError(await stream(token, '', { 'last-event-id': '0' }), 410, 'gone')
    expect(await json(await api(t, token).list('?since=2'))).toMatchObject({ revision: 4, changes: [{ key: 'b' }, { key: 'c' }] })
    expect((await json(await api(t, token).list())).revision).toBe(4)
  })
})

describe('GET /api/settings-events', () => {
  test('set and delete events in revision order: id = revision, set carries the setting and its ETag as the header quotes it', async () => {
    const res = await stream(w.annA)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const events = new SseReader(res)
    const saved = await post(w.annA, 'theme', 'dark')
    await del(w.annA, 'theme')
    await post(w.bobA, 'theme', 'bob') // another user's: not on this stream
    await post(w.annB, 'theme', 'b') // another app's: not on this stream
    await post(w.annA, 'lang', 'en')
    const got = await events.collect((e) => e.id === '3')
    expect(got.map((e) => [e.id, e.event])).toEqual([
      ['1', 'set'],
      ['2', 'delete'],
      ['3', 'set'],
    ])
    expect(data(got[0])).toEqual({ key: 'theme', value: 'dark', client_id: w.appA.id, updated_at: expect.any(String), etag: saved.headers.get('etag') })
    expect(data(got[1])).toEqual({ key: 'theme' })
  })

  test('Last-Event-ID (or ?since=) replays what was missed first, then goes on live', async () => {
    await post(w.annA, 'a', 1)
    await post(w.annA, 'b', 1)
    await post(w.annA, 'a', 2)
    const replay = new SseReader(await stream(w.annA, '', { 'last-event-id': '1' }))
    expect((await replay.collect((e) => e.id === '3')).map((e) => [e.id, data(e).key])).toEqual([
      ['2', 'b'],
      ['3', 'a'],
    ])
    await post(w.annA, 'c', 1)
    expect((await replay.next())!.id).toBe('4')
    const since = new SseReader(await stream(w.annA, '?since=3'))
    expect((await since.next())!.id).toBe('4')
  })

  test('bad resume points: not an integer 400, from the future 400, purged 410; no token 401; without settings:read 403', async () => {
    await post(w.annA, 'a', 1)
    await expectError(await stream(w.annA, '', { 'last-event-id': 'x' }), 400, 'invalid_request', 'Last-Event-ID must be a non-negative integer revision')
    await expectError(await stream(w.annA, '', { 'last-event-id': '5' }), 400, 'invalid_request', 'Last-Event-ID 5 is past the current revision 1')
    await expectError(await stream(w.annA, '?since=-2'), 400, 'invalid_request')
    await expectError(await stream(undefined), 401, 'invalid_token')
    const profileOnly = await mintToken(t, w.appA.id, w.ann.id, 'profile')
    await expectError(await stream(profileOnly), 403, 'insufficient_scope')
    expect(t.ctx.settingsHub.count).toBe(0)
  })

  test('a stream ends within a second of its token being revoked, or expiring', async () => {
    const revokedToken = await mintToken(t, w.appA.id, w.ann.id)
    const one = new SseReader(await stream(revokedToken))
    // What POST /api/oauth/revoke does for an access token (tests/oauth/revoke.test.ts drives the endpoint).
    await t.ctx.tokens.revoke((await t.ctx.tokens.identify(revokedToken))!.id)
    const started = Date.now()
    expect(await one.collect((e) => e.event === 'end', 2000)).toEqual([{ event: 'end', data: '{"reason":"revoked"}' }])
    expect(await one.next()).toBeUndefined()
    expect(Date.now() - started).toBeLessThan(1000)

    const two = new SseReader(await stream(w.annA))
    t.clock.advance(3601_000)
    expect(await two.collect((e) => e.event === 'end', 2000)).toEqual([{ event: 'end', data: '{"reason":"expired"}' }])
    expect(t.ctx.settingsHub.count).toBe(0)
  })

  test('revoking the app on /account, or deleting the user, ends their streams', async () => {
    const jar = await signIn(t, 'ann@example.com')
    const events = new SseReader(await stream(w.annA))
    const page = await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })
    const revoke = await t.handle('/account/revoke', {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ client_id: w.appA.id, csrf_token: csrfFrom(await page.text()) }),
    })
    expect(revoke.status).toBe(303)
    expect(await events.collect((e) => e.event === 'end', 2000)).toEqual([{ event: 'end', data: '{"reason":"revoked"}' }])

    const bobs = new SseReader(await stream(w.bobA))
    expect(await t.store.users.deleteUser(w.bob.id)).toBe(true)
    expect(await bobs.collect((e) => e.event === 'end', 2000)).toEqual([{ event: 'end', data: '{"reason":"revoked"}' }])
  })

  test('at most 20 streams per user (429) and SETTINGS_STREAMS_MAX per instance (503), with Retry-After', async () => {
    const open = await Promise.all(Array.from({ length: 20 }, () => stream(w.annA)))
    expect(open.every((r) => r.status === 200)).toBe(true)
    const refused = await expectError(await stream(w.annA), 429, 'too_many_requests')
    expect(refused.headers.get('retry-after')).toBe('10')
    expect((await stream(w.bobA)).status).toBe(200)

    const small = await createTestApp({ SETTINGS_STREAMS_MAX: '1' })
    const sw = await settingsWorld(small)
    expect((await small.handle('/api/settings-events', { headers: { authorization: `Bearer ${sw.annA}` } })).status).toBe(200)
    const full = await small.handle('/api/settings-events', { headers: { authorization: `Bearer ${sw.bobA}` } })
    await expectError(full, 503, 'temporarily_unavailable', 'this server has as many settings streams open as it may')
    expect(full.headers.get('retry-after')).toBe('5')
    small.ctx.settingsHub.closeAll()
  })

  test('the limits hold exactly however many streams open at the same moment: 100 at once → 20 (429 for the rest), SETTINGS_STREAMS_MAX (503)', async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, () => stream(w.annA)))
    const opened = answers.filter((r) => r.status === 200)
    const refused = answers.filter((r) => r.status !== 200)
    expect(opened.length).toBe(20)
    expect(opened.every((r) => r.headers.get('content-type') === 'text/event-stream')).toBe(true)
    expect(refused.map((r) => r.status)).toEqual(Array(80).fill(429))
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toBe('10')
      expect((await json(r)).error).toBe('too_many_requests')
    }
    expect(t.ctx.settingsHub.count).toBe(20)
    await Promise.all(opened.map((r) => r.body!.cancel()))
    expect(t.ctx.settingsHub.count).toBe(0)

    const small = await createTestApp({ SETTINGS_STREAMS_MAX: '5' })
    const sw = await settingsWorld(small)
    const open = (token: string) => small.handle('/api/settings-events', { headers: { authorization: `Bearer ${token}` } })
    const all = await Promise.all(Array.from({ length: 100 }, (_, i) => open(i % 2 ? sw.annA : sw.bobA)))
    expect(all.filter((r) => r.status === 200).length).toBe(5)
    const full = all.filter((r) => r.status !== 200)
    expect(full.map((r) => r.status)).toEqual(Array(95).fill(503))
    for (const r of full) {
      expect(r.headers.get('retry-after')).toBe('5')
      expect(await json(r)).toEqual({ error: 'temporarily_unavailable', error_description: 'this server has as many settings streams open as it may' })
    }
    expect(small.ctx.settingsHub.count).toBe(5)
    small.ctx.settingsHub.closeAll()
  })

  test('a stream refused after its slot was taken (Last-Event-ID past the current revision) gives the slot back', async () => {
    for (let i = 0; i < 25; i++) await expectError(await stream(w.annA, '', { 'last-event-id': '7' }), 400, 'invalid_request', 'Last-Event-ID 7 is past the current revision 0')
    expect(t.ctx.settingsHub.count).toBe(0)
    const answers = await Promise.all(Array.from({ length: 20 }, () => stream(w.annA)))
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200))
    await Promise.all(answers.map((r) => r.body!.cancel()))
  })

  test('a reader that falls 1 MiB behind is dropped with a clear end; it resumes with Last-Event-ID', async () => {
    const slow = await stream(w.annA) // never read while the writes go on
    const big = 'x'.repeat(60_000)
    for (let i = 0; i < 20; i++) expect((await post(w.annA, `k${i}`, big)).status).toBe(200)
    await t.ctx.settingsHub.settled() // PostgreSQL: a change may reach the stream through a catch-up still reading the store
    expect(t.ctx.settingsHub.count).toBe(0)
    const events = await new SseReader(slow).collect((e) => e.event === 'end')
    expect(events.at(-1)).toEqual({ event: 'end', data: '{"reason":"backlog"}' })
    const last = events.filter((e) => e.id).at(-1)!.id!
    const resumed = new SseReader(await stream(w.annA, '', { 'last-event-id': last }))
    expect((await resumed.collect((e) => e.id === '20')).at(-1)!.id).toBe('20')
  })

  test('stopping the server ends every stream cleanly', async () => {
    const events = new SseReader(await stream(w.annA))
    t.ctx.settingsHub.closeAll()
    expect(await events.collect((e) => e.event === 'end')).toEqual([{ event: 'end', data: '{"reason":"shutdown"}' }])
    await expectError(await stream(w.annA), 503, 'temporarily_unavailable', 'the server is stopping')
  })

  test('a comment every 15 s keeps an idle stream open through proxies; the stream starts with retry: 2000', async () => {
    expect(HEARTBEAT_MS).toBe(15_000)
    const res = await stream(w.annA)
    const reader = res.body!.getReader()
    const text = async () => new TextDecoder().decode((await reader.read()).value)
    expect(await text()).toBe('retry: 2000\n\n')
    ;(t.ctx.settingsHub as unknown as { beat(): void }).beat() // what the 15-second timer runs
    expect(await text()).toBe(': keep-alive\n\n')
    await reader.cancel()
  })

  test('CORS lets a browser send Last-Event-ID', async () => {
    const res = await t.handle('/api/settings-events', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'last-event-id' } })
    expect(res.headers.get('access-control-allow-headers')).toContain('Last-Event-ID')
  })
})

describe('POST /api/settings-events/ticket: for EventSource, which cannot send a header', () => {
  test('a ticket opens one stream, once, within 30 s; the token never travels in the URL', async () => {
    const issue = () => t.handle('/api/settings-events/ticket', { method: 'POST', headers: { authorization: `Bearer ${w.annA}` } })
    const res = await issue()
    expect(res.status).toBe(200)
    const { ticket } = await json(res)
    expect(ticket).toMatch(/^lk_st_[A-Za-z0-9_-]{43}$/)
    const opened = await stream(undefined, `?ticket=${ticket}`)
    expect(opened.status).toBe(200)
    const events = new SseReader(opened)
    await post(w.annA, 'a', 1)
    expect((await events.next())!.event).toBe('set')
    await expectError(await stream(undefined, `?ticket=${ticket}`), 401, 'invalid_token', 'the ticket is invalid, used or expired (a ticket works once, for 30 seconds)')
    const late = (await json(await issue())).ticket
    t.clock.advance(30_001)
    await expectError(await stream(undefined, `?ticket=${late}`), 401, 'invalid_token')
    expect(await t.rows('SELECT token_id FROM stream_tickets')).toHaveLength(1) // the late one, unused
  })

  test('a ticket needs a token with settings:read', async () => {
    const profileOnly = await mintToken(t, w.appA.id, w.ann.id, 'profile')
    await expectError(await t.handle('/api/settings-events/ticket', { method: 'POST', headers: { authorization: `Bearer ${profileOnly}` } }), 403, 'insufficient_scope')
  })
})

describe('several instances on one database', () => {
  test.skipIf(testEngine === 'sqlite')('a write through one instance arrives on a stream held on another (PostgreSQL NOTIFY at commit)', async () => {
    // SQLite has one serving process: its twin is every stream test above, the write made by the process holding the stream.
    const pair = await openTestStorePair()
    try {
      const clock = manualClock()
      const config = loadConfig({ DATABASE_URL: ':memory:' })
      const a = createApp(await createContext({ store: pair.store, config, clock }))
      const bCtx = await createContext({ store: pair.other, config, clock })
      const b = createApp(bCtx)
      const other: TestApp = { ...t, store: pair.other, ctx: bCtx, app: b, handle: (p, i) => b.handle(new Request('http://localhost' + p, i)) }
      const world = await settingsWorld(other)
      const held = new SseReader(await b.handle(new Request('http://localhost/api/settings-events', { headers: { authorization: `Bearer ${world.annA}` } })))
      const write = await a.handle(new Request('http://localhost/api/settings', { method: 'POST', headers: { authorization: `Bearer ${world.annA}`, 'content-type': 'application/json' }, body: JSON.stringify({ client_id: world.appA.id, key: 'k', value: 1 }) }))
      expect(write.status).toBe(200)
      const event = await held.next(3000)
      expect(event).toMatchObject({ id: '1', event: 'set' })
      bCtx.settingsHub.closeAll()
    } finally {
      await pair.close()
    }
  })
})

describe('/account: the user’s own data', () => {
  test('"Download data" is one app’s settings as a JSON file; "Download all my data" the profile, apps with scopes and every setting', async () => {
    await post(w.annA, 'theme', { dark: true })
    await post(w.annB, 'lang', 'en', w.appB.id)
    await post(w.bobA, 'theme', 'bob')
    const jar = await signIn(t, 'ann@example.com')
    const page = await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()
    expect(page).toContain('Download all my data')

    const one = await t.handle(`/account/data?client_id=${w.appA.id}`, { headers: { cookie: cookieHeader(jar) } })
    expect(one.status).toBe(200)
    expect(one.headers.get('content-disposition')).toBe(`attachment; filename="latchkey-settings-${w.appA.id}.json"`)
    expect(one.headers.get('cache-control')).toBe('no-store')
    expect(await one.json()).toEqual({ app: { client_id: w.appA.id, name: 'App A' }, settings: [{ key: 'theme', value: { dark: true }, updated_at: expect.any(String) }] })

    const all = await t.handle('/account/data', { headers: { cookie: cookieHeader(jar) } })
    const body = await json(all)
    expect(body.profile).toEqual({ id: w.ann.id, email: 'ann@example.com', email_verified: false, full_name: 'Ann', avatar_url: null })
    expect(body.apps.map((a: { name: string; settings: Array<{ key: string }> }) => [a.name, a.settings.map((s) => s.key)]).sort()).toEqual([
      ['App A', ['theme']],
      ['App B', ['lang']],
    ])
    // Without a session: to the sign-in page, never someone's data.
    expect((await t.handle('/account/data')).status).toBe(303)
    expect((await t.handle('/account/data?client_id=ffff', { headers: { cookie: cookieHeader(jar) } })).status).toBe(404)
  })

  test('a download holds each value as it was stored, not indented afresh: a value nested 60 deep is no bigger in the file (it was ~68 times its size)', async () => {
    let nested: unknown = Array.from({ length: 2000 }, () => 0)
    for (let i = 0; i < 60; i++) nested = [nested]
    await post(w.annA, 'deep', nested)
    await post(w.annA, 'text', 'a "quoted" \u0000 value')
    const stored = JSON.stringify(nested)
    const jar = await signIn(t, 'ann@example.com')
    for (const path of [`/account/data?client_id=${w.appA.id}`, '/account/data']) {
      const text = await (await t.handle(path, { headers: { cookie: cookieHeader(jar) } })).text()
      expect(text).toContain(stored)
      expect(text.length).toBeLessThan(stored.length + 2_000)
      const settings = path === '/account/data' ? (JSON.parse(text) as { apps: Array<{ settings: Array<{ key: string; value: unknown }> }> }).apps.flatMap((a) => a.settings) : (JSON.parse(text) as { settings: Array<{ key: string; value: unknown }> }).settings
      expect(settings.find((s) => s.key === 'deep')!.value).toEqual(nested)
      expect(settings.find((s) => s.key === 'text')!.value).toBe('a "quoted" \u0000 value')
    }
  })

  test('"Delete data" deletes all of one app’s settings (CSRF), one revision per key, which its streams hear', async () => {
    await post(w.annA, 'a', 1)
    await post(w.annA, 'b', 2)
    await post(w.bobA, 'a', 1)
    const events = new SseReader(await stream(w.annA))
    const jar = await signIn(t, 'ann@example.com')
    const page = await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()
    const send = (csrf: string) =>
      t.handle('/account/data/delete', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' }, body: form({ client_id: w.appA.id, csrf_token: csrf }) })
    expect((await send('forged')).status).toBe(403)
    expect((await json(await api(t, w.annA).list())).settings).toHaveLength(2)
    const res = await send(csrfFrom(page))
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Deleted 2 settings of ')
    expect(await json(await api(t, w.annA).list())).toEqual({ settings: [], revision: 4 })
    expect((await json(await api(t, w.bobA).list())).settings).toHaveLength(1)
    expect((await events.collect((e) => e.id === '4')).map((e) => [e.id, e.event, data(e).key])).toEqual([
      ['3', 'delete', 'a'],
      ['4', 'delete', 'b'],
    ])
  })
})
