import { beforeEach, describe, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers'
import { api, dump, mintToken, settingsWorld } from './helpers'

let t: TestApp
let w: Awaited<ReturnType<typeof settingsWorld>>

beforeEach(async () => {
  t = await createTestApp()
  w = await settingsWorld(t)
})

async function errorOf(res: Response) {
  const body = (await res.json()) as Record<string, unknown>
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description'])
  return body.error
}

describe('POST /api/settings', () => {
  test('creates: 200 {success: true, setting: {key, value, client_id, updated_at}} with a strong ETag', async () => {
    const res = await api(t, w.annA).post({ client_id: w.appA.id, key: 'theme', value: 'dark' })
    expect(res.status).toBe(200)
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(await res.json()).toEqual({
      success: true,
      setting: { key: 'theme', value: 'dark', client_id: w.appA.id, updated_at: new Date(t.clock.now()).toISOString() },
    })
  })

  test('value comes back with the JSON type it was saved with', async () => {
    const values = ['text', '', 42, -7, 3.14159, -0.5, 1e21, true, false, [], [1, 'two', [3]], {}, { a: { b: [null, 1] }, 'ü': 'ß' }]
    for (const [i, value] of values.entries()) {
      const saved = (await (await api(t, w.annA).post({ client_id: w.appA.id, key: `k${i}`, value })).json()) as { setting: { value: unknown } }
      expect(saved.setting.value).toEqual(value)
      const read = (await (await api(t, w.annA).get(`k${i}`)).json()) as { setting: { value: unknown } }
      expect(read.setting.value).toEqual(value)
    }
  })

  test('replaces an existing key (upsert); updated_at advances on every write, even within one millisecond', async () => {
    const first = (await (await api(t, w.annA).post({ client_id: w.appA.id, key: 'n', value: 1 })).json()) as any
    const second = (await (await api(t, w.annA).post({ client_id: w.appA.id, key: 'n', value: 2 })).json()) as any
    expect(second.setting.value).toBe(2)
    expect(second.setting.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.parse(second.setting.updated_at)).toBeGreaterThan(Date.parse(first.setting.updated_at))
    t.clock.advance(5000)
    const third = (await (await api(t, w.annA).post({ client_id: w.appA.id, key: 'n', value: 3 })).json()) as any
    expect(third.setting.updated_at).toBe(new Date(t.clock.now()).toISOString())
    expect(await dump(t)).toHaveLength(1)
  })
})

describe('GET /api/settings and /api/settings/:key', () => {
  test('lists the token user’s settings for the token’s app, sorted by key in byte order', async () => {
    for (const key of ['b', 'B', 'a.z', 'a-z', 'A', '_x', ':c', '0'])
      await api(t, w.annA).post({ client_id: w.appA.id, key, value: key })
    const res = await api(t, w.annA).list()
    expect(res.status).toBe(200)
    const body = (await res.json()) as { settings: Array<{ key: string; client_id: string }> }
    expect(body.settings.map((s) => s.key)).toEqual(['0', ':c', 'A', 'B', '_x', 'a-z', 'a.z', 'b'])
    expect(body.settings.every((s) => s.client_id === w.appA.id)).toBe(true)
    expect((await api(t, w.annA).list(`?client_id=${w.appA.id}`)).status).toBe(200)
  })

  test('an empty list is {settings: [], revision: 0}', async () => {
    expect(await (await api(t, w.annA).list()).json()).toEqual({ settings: [], revision: 0 })
  })

  test('one setting: 200 {setting} with its ETag; 404 not_found when absent', async () => {
    const saved = await api(t, w.annA).post({ client_id: w.appA.id, key: 'lang', value: 'en' })
    const res = await api(t, w.annA).get('lang', `?client_id=${w.appA.id}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('etag')).toBe(saved.headers.get('etag'))
    expect(((await res.json()) as any).setting.value).toBe('en')
    const missing = await api(t, w.annA).get('nope')
    expect(missing.status).toBe(404)
    expect(await errorOf(missing)).toBe('not_found')
  })
})

describe('DELETE /api/settings/:key', () => {
  test('200 {success: true}; then 404 not_found', async () => {
    await api(t, w.annA).post({ client_id: w.appA.id, key: 'gone', value: 1 })
    const res = await api(t, w.annA).del('gone', `?client_id=${w.appA.id}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    const again = await api(t, w.annA).del('gone', `?client_id=${w.appA.id}`)
    expect(again.status).toBe(404)
    expect(await errorOf(again)).toBe('not_found')
  })

  test('client_id is required (seed) → 400 invalid_request', async () => {
    await api(t, w.annA).post({ client_id: w.appA.id, key: 'keep', value: 1 })
    const res = await api(t, w.annA).del('keep', '')
    expect(res.status).toBe(400)
    expect(await errorOf(res)).toBe('invalid_request')
    expect(await dump(t)).toHaveLength(1)
  })
})

describe('conditional requests', () => {
  test('If-Match with the stored ETag succeeds; a stale one is 412 precondition_failed and changes nothing', async () => {
    const v1 = (await api(t, w.annA).post({ client_id: w.appA.id, key: 'doc', value: 1 })).headers.get('etag')!
    const v2res = await api(t, w.annA).post({ client_id: w.appA.id, key: 'doc', value: 2 }, { 'if-match': v1 })
    expect(v2res.status).toBe(200)
    const stale = await api(t, w.annA).post({ client_id: w.appA.id, key: 'doc', value: 3 }, { 'if-match': v1 })
    expect(stale.status).toBe(412)
    expect(await errorOf(stale)).toBe('precondition_failed')
    expect(((await (await api(t, w.annA).get('doc')).json()) as any).setting.value).toBe(2)
  })

  test('If-Match on a missing key → 412', async () => {
    const res = await api(t, w.annA).post({ client_id: w.appA.id, key: 'new', value: 1 }, { 'if-match': '"abc"' })
    expect(res.status).toBe(412)
    expect(await dump(t)).toHaveLength(0)
  })

  test('If-None-Match: * creates only: 200 for a new key, 412 when it exists', async () => {
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'once', value: 1 }, { 'if-none-match': '*' })).status).toBe(200)
    const res = await api(t, w.annA).post({ client_id: w.appA.id, key: 'once', value: 2 }, { 'if-none-match': '*' })
    expect(res.status).toBe(412)
    expect(await errorOf(res)).toBe('precondition_failed')
  })

  test('GET with a matching If-None-Match → 304 with the ETag and no body; a different one → 200', async () => {
    const etag = (await api(t, w.annA).post({ client_id: w.appA.id, key: 'c', value: 'x' })).headers.get('etag')!
    const res = await api(t, w.annA).get('c', '', { 'if-none-match': etag })
    expect(res.status).toBe(304)
    expect(res.headers.get('etag')).toBe(etag)
    expect(await res.text()).toBe('')
    expect((await api(t, w.annA).get('c', '', { 'if-none-match': '"other"' })).status).toBe(200)
  })

  test('two devices writing the same key: the second, holding a stale ETag, does not lose the first’s update', async () => {
    const base = (await api(t, w.annA).post({ client_id: w.appA.id, key: 'list', value: ['a'] })).headers.get('etag')!
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'list', value: ['a', 'phone'] }, { 'if-match': base })).status).toBe(200)
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'list', value: ['a', 'laptop'] }, { 'if-match': base })).status).toBe(412)
  })

  test('DELETE honours If-Match', async () => {
    await api(t, w.annA).post({ client_id: w.appA.id, key: 'd', value: 1 })
    expect((await api(t, w.annA).del('d', `?client_id=${w.appA.id}`, { 'if-match': '"stale"' })).status).toBe(412)
    expect(await dump(t)).toHaveLength(1)
  })

  test('every refusal, POST and DELETE, with its exact body; ETag lists match by any member, spaces trimmed; nothing changes', async () => {
    const post = (key: string, value: unknown, headers: Record<string, string>) => api(t, w.annA).post({ client_id: w.appA.id, key, value }, headers)
    const del = (key: string, headers: Record<string, string>) => api(t, w.annA).del(key, `?client_id=${w.appA.id}`, headers)
    const refused = async (res: Response, status: number, error: string, description: string) => {
      expect(res.status).toBe(status)
      expect(await res.json()).toEqual({ error, error_description: description })
    }
    const etag = (await post('k', 1, {})).headers.get('etag')!
    const before = await dump(t)
    await refused(await post('k', 2, { 'if-match': '"a", "b"' }), 412, 'precondition_failed', 'If-Match does not match the stored version')
    await refused(await post('k', 2, { 'if-match': `*, ${etag}x` }), 412, 'precondition_failed', 'If-Match does not match the stored version')
    await refused(await post('k', 2, { 'if-none-match': '*' }), 412, 'precondition_failed', 'the key already exists')
    await refused(await post('k', 2, { 'if-none-match': ` "a" ,${etag} ` }), 412, 'precondition_failed', 'If-None-Match matches the stored version')
    await refused(await post('new', 2, { 'if-match': '*' }), 412, 'precondition_failed', 'If-Match does not match the stored version')
    await refused(await post('new', 2, { 'if-match': '' }), 412, 'precondition_failed', 'If-Match does not match the stored version')
    await refused(await del('k', { 'if-match': '"a"' }), 412, 'precondition_failed', 'If-Match does not match the stored version')
    await refused(await del('k', { 'if-none-match': '*' }), 412, 'precondition_failed', 'the key already exists')
    await refused(await del('new', { 'if-match': '*' }), 412, 'precondition_failed', 'If-Match does not match the stored version')
    await refused(await del('new', {}), 404, 'not_found', 'no setting named "new"')
    expect(await dump(t)).toEqual(before)
    expect((await post('new', 2, { 'if-none-match': `"a", ${etag}` })).status).toBe(200)
    const next = (await post('k', 2, { 'if-match': `"a",  ${etag}` })).headers.get('etag')!
    expect((await del('k', { 'if-match': `"a",${next}`, 'if-none-match': etag })).status).toBe(200)
    expect((await post('k', 3, { 'if-match': '*' })).status).toBe(412)
  })

  test('racing writers cannot pass a quota together: 20 new keys at once under SETTINGS_MAX_KEYS=5 → exactly 5 saved', async () => {
    t = await createTestApp({ SETTINGS_MAX_KEYS: '5' })
    w = await settingsWorld(t)
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api(t, w.annA).post({ client_id: w.appA.id, key: `k${i}`, value: i })))
    expect(results.map((r) => r.status).sort()).toEqual([...Array(5).fill(200), ...Array(15).fill(409)])
    expect(await results.find((r) => r.status === 409)!.json()).toEqual({ error: 'quota_exceeded', error_description: 'this application may keep at most 5 settings per user' })
    expect(await dump(t)).toHaveLength(5)
  })
})

describe('isolation and scopes', () => {
  test('a token for app B passing client_id=A → 403 access_denied, on every route', async () => {
    await api(t, w.annA).post({ client_id: w.appA.id, key: 'secret', value: 'a' })
    const b = api(t, w.annB)
    for (const res of [
      await b.list(`?client_id=${w.appA.id}`),
      await b.get('secret', `?client_id=${w.appA.id}`),
      await b.post({ client_id: w.appA.id, key: 'secret', value: 'b' }),
      await b.del('secret', `?client_id=${w.appA.id}`),
    ]) {
      expect(res.status).toBe(403)
      expect(await errorOf(res)).toBe('access_denied')
    }
    expect(await dump(t)).toHaveLength(1)
  })

  test('an app sees only its own settings, of only the token’s user', async () => {
    await api(t, w.annA).post({ client_id: w.appA.id, key: 'k', value: 'ann-a' })
    await api(t, w.annB).post({ client_id: w.appB.id, key: 'k', value: 'ann-b' })
    await api(t, w.bobA).post({ client_id: w.appA.id, key: 'k', value: 'bob-a' })
    const values = async (token: string) => ((await (await api(t, token).list()).json()) as any).settings.map((s: any) => s.value)
    expect(await values(w.annA)).toEqual(['ann-a'])
    expect(await values(w.annB)).toEqual(['ann-b'])
    expect(await values(w.bobA)).toEqual(['bob-a'])
    expect((await api(t, w.bobA).del('k', `?client_id=${w.appA.id}`)).status).toBe(200)
    expect(await values(w.annA)).toEqual(['ann-a'])
  })

  test('read without settings:read and write without settings:write → 403 insufficient_scope with the RFC 6750 header', async () => {
    const readOnly = await mintToken(t, w.appA.id, w.ann.id, 'settings:read')
    const writeOnly = await mintToken(t, w.appA.id, w.ann.id, 'settings:write profile')
    const post = await api(t, readOnly).post({ client_id: w.appA.id, key: 'k', value: 1 })
    expect(post.status).toBe(403)
    expect(post.headers.get('www-authenticate')).toBe('Bearer realm="latchkey", error="insufficient_scope", scope="settings:write"')
    expect(await errorOf(post)).toBe('insufficient_scope')
    const del = await api(t, readOnly).del('k', `?client_id=${w.appA.id}`)
    expect(del.status).toBe(403)
    for (const res of [await api(t, writeOnly).list(), await api(t, writeOnly).get('k')]) {
      expect(res.status).toBe(403)
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="latchkey", error="insufficient_scope", scope="settings:read"')
    }
    expect(await dump(t)).toHaveLength(0)
  })

  test('no token → 401 invalid_token with a bare challenge; a bad token → 401 with error="invalid_token"', async () => {
    const none = await api(t, undefined).list()
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="latchkey", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"')
    expect(await errorOf(none)).toBe('invalid_token')
    const bad = await api(t, 'lk_at_bad').post({ client_id: w.appA.id, key: 'k', value: 1 })
    expect(bad.status).toBe(401)
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="latchkey", error="invalid_token", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"')
    expect(await dump(t)).toHaveLength(0)
  })

  test('settings are deleted with their user and with their app', async () => {
    await api(t, w.annA).post({ client_id: w.appA.id, key: 'k', value: 1 })
    await api(t, w.annB).post({ client_id: w.appB.id, key: 'k', value: 1 })
    await api(t, w.bobA).post({ client_id: w.appA.id, key: 'k', value: 1 })
    await t.store.users.deleteUser(w.ann.id)
    expect(await dump(t)).toHaveLength(1)
    await t.store.clients.deleteClient(w.appA.id)
    expect(await dump(t)).toHaveLength(0)
  })
})

describe('bad input: documented status and error, nothing changed', () => {
  const cases: Array<[string, () => unknown, number, string, Record<string, string>?]> = [
    ['body not JSON', () => '{"client_id":', 400, 'invalid_request'],
    ['body a JSON array', () => '[1]', 400, 'invalid_request'],
    ['Content-Type not JSON', () => 'client_id=x', 400, 'invalid_request', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['client_id missing', () => ({ key: 'k', value: 1 }), 400, 'invalid_request'],
    ['key missing', () => ({ client_id: w.appA.id, value: 1 }), 400, 'invalid_request'],
    ['value missing', () => ({ client_id: w.appA.id, key: 'k' }), 400, 'invalid_request'],
    ['value null', () => ({ client_id: w.appA.id, key: 'k', value: null }), 400, 'invalid_request'],
    ['key empty', () => ({ client_id: w.appA.id, key: '', value: 1 }), 400, 'invalid_request'],
    ['key over 128 characters', () => ({ client_id: w.appA.id, key: 'k'.repeat(129), value: 1 }), 400, 'invalid_request'],
    ['key with a space', () => ({ client_id: w.appA.id, key: 'a b', value: 1 }), 400, 'invalid_request'],
    ['key with a slash', () => ({ client_id: w.appA.id, key: 'a/b', value: 1 }), 400, 'invalid_request'],
    ['key with unicode', () => ({ client_id: w.appA.id, key: 'clé', value: 1 }), 400, 'invalid_request'],
    ['key not a string', () => ({ client_id: w.appA.id, key: 7, value: 1 }), 400, 'invalid_request'],
    ['value over SETTINGS_MAX_VALUE_BYTES', () => ({ client_id: w.appA.id, key: 'k', value: 'x'.repeat(65_535) }), 413, 'value_too_large'],
    ['body over 1 MiB', () => ({ client_id: w.appA.id, key: 'k', value: 'x'.repeat(1_048_577) }), 413, 'request_too_large'],
  ]
  for (const [name, body, status, error, headers] of cases) {
    test(`${name} → ${status} ${error}`, async () => {
      await api(t, w.annA).post({ client_id: w.appA.id, key: 'k', value: 'original' })
      const before = await dump(t)
      const res = await api(t, w.annA).post(body(), headers)
      expect(res.status).toBe(status)
      expect(await errorOf(res)).toBe(error)
      expect(await dump(t)).toEqual(before)
    })
  }

  test('a value of exactly SETTINGS_MAX_VALUE_BYTES is accepted (the limit counts serialized JSON bytes)', async () => {
    const res = await api(t, w.annA).post({ client_id: w.appA.id, key: 'k', value: 'x'.repeat(65_534) })
    expect(res.status).toBe(200)
    const multibyte = await api(t, w.annA).post({ client_id: w.appA.id, key: 'm', value: 'é'.repeat(32_768) }) // 65,538 bytes of JSON
    expect(multibyte.status).toBe(413)
  })

  test('a bad key in the path → 400 invalid_request', async () => {
    for (const key of ['a%20b', 'k'.repeat(129), '%C3%A9']) {
      const res = await api(t, w.annA).get(key)
      expect(res.status).toBe(400)
      expect(await errorOf(res)).toBe('invalid_request')
    }
  })

  test('a new key past SETTINGS_MAX_KEYS → 409 quota_exceeded; replacing an existing key still works', async () => {
    t = await createTestApp({ SETTINGS_MAX_KEYS: '3' })
    w = await settingsWorld(t)
    for (const key of ['a', 'b', 'c']) expect((await api(t, w.annA).post({ client_id: w.appA.id, key, value: 1 })).status).toBe(200)
    const res = await api(t, w.annA).post({ client_id: w.appA.id, key: 'd', value: 1 })
    expect(res.status).toBe(409)
    expect(await errorOf(res)).toBe('quota_exceeded')
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'c', value: 2 })).status).toBe(200)
    // The quota is per user and per application.
    expect((await api(t, w.annB).post({ client_id: w.appB.id, key: 'd', value: 1 })).status).toBe(200)
    expect(await dump(t)).toHaveLength(4)
  })

  test('item 7: a write past SETTINGS_MAX_USER_BYTES, across all apps, → 409 quota_exceeded; shrinking and deleting free room', async () => {
    t = await createTestApp({ SETTINGS_MAX_USER_BYTES: '100' })
    w = await settingsWorld(t)
    const fifty = 'x'.repeat(48) // 50 bytes as JSON, with its quotes
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'a', value: fifty })).status).toBe(200)
    expect((await api(t, w.annB).post({ client_id: w.appB.id, key: 'b', value: fifty })).status).toBe(200)
    const over = await api(t, w.annB).post({ client_id: w.appB.id, key: 'c', value: 1 })
    expect(over.status).toBe(409)
    expect(await over.json()).toEqual({ error: 'quota_exceeded', error_description: 'a user may keep at most 100 bytes of settings across all applications' })
    // Growing an existing value counts only the growth; shrinking is always allowed.
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'a', value: fifty + 'x' })).status).toBe(409)
    expect((await api(t, w.annA).post({ client_id: w.appA.id, key: 'a', value: 'é'.repeat(19) })).status).toBe(200) // 40 bytes
    expect((await api(t, w.annB).post({ client_id: w.appB.id, key: 'c', value: 'y'.repeat(8) })).status).toBe(200) // 10 bytes: 100 in all
    expect((await api(t, w.annB).post({ client_id: w.appB.id, key: 'd', value: 1 })).status).toBe(409)
    expect((await api(t, w.annA).del('a', `?client_id=${w.appA.id}`)).status).toBe(200)
    expect((await api(t, w.annB).post({ client_id: w.appB.id, key: 'd', value: 1 })).status).toBe(200)
    // Another user has their own allowance.
    expect((await api(t, w.bobA).post({ client_id: w.appA.id, key: 'a', value: fifty })).status).toBe(200)
    expect(await t.rows('SELECT user_id, CAST(sum(bytes) AS INTEGER) AS bytes FROM setting_counts GROUP BY user_id ORDER BY bytes')).toEqual([
      { user_id: w.bob.id, bytes: 50 },
      { user_id: w.ann.id, bytes: 61 },
    ])
  })
})
