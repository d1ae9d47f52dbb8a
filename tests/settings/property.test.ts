import { beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { ORIGIN, createTestApp, type TestApp } from '../helpers'
import { api, dump, mintToken, settingsWorld } from './helpers'

const DOCUMENTED = new Set([200, 304, 400, 401, 403, 404, 405, 409, 412, 413])

let t: TestApp
let w: Awaited<ReturnType<typeof settingsWorld>>
let readOnly: string

beforeAll(async () => {
  t = await createTestApp({ SETTINGS_MAX_KEYS: '20', SETTINGS_MAX_VALUE_BYTES: '2048' })
  w = await settingsWorld(t)
  readOnly = await mintToken(t, w.appA.id, w.ann.id, 'settings:read')
  for (const key of ['theme', 'lang', 'a.b:c-d_e']) await api(t, w.annA).post({ client_id: w.appA.id, key, value: { v: key } })
})

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 })
const validKey = fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/)
const anyKey = fc.oneof(
  validKey,
  fc.constantFrom('theme', 'lang', 'a.b:c-d_e'),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 300 }),
  fc.uint8Array({ maxLength: 40 }).map((b) => [...b].map((x) => '%' + x.toString(16).padStart(2, '0')).join('')),
  fc.constantFrom('%', '%zz', '%C3', '..', '.', '', '%2F', 'k'.repeat(129), 'x'.repeat(5000)),
)
const clientIds = () => fc.constantFrom(w.appA.id, w.appB.id, 'nope', '', '%00')
const token = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(w.annA, w.annB, w.bobA) },
    { weight: 1, arbitrary: fc.constantFrom<string | undefined>(readOnly, 'lk_at_bogus', 'garbage', undefined) },
  )
const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 3000 }))
const body = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ client_id: clientIds(), key: fc.oneof(validKey, anyKey), value: jsonValue }) },
    fc.record({ client_id: fc.oneof(clientIds(), fc.jsonValue()), key: fc.oneof(anyKey, fc.jsonValue()), value: jsonValue }, { requiredKeys: [] }),
    fc.jsonValue({ maxDepth: 2 }),
    fc.string({ maxLength: 200 }),
    fc.constant('{"client_id":'),
  )
const headerValue = fc.oneof(printable, fc.constantFrom('*', '"abc"', 'W/"x"', '*, "a"'))
const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', '', 'multipart/form-data; boundary=x', 'application/JSON') },
)

// Mostly the real routes, sometimes any method on any path.
const route = fc.oneof(
  { weight: 2, arbitrary: fc.record({ method: fc.constant('GET'), key: fc.constant(undefined) }) },
  { weight: 3, arbitrary: fc.record({ method: fc.constant('GET'), key: anyKey }) },
  { weight: 5, arbitrary: fc.record({ method: fc.constant('POST'), key: fc.constant(undefined) }) },
  { weight: 3, arbitrary: fc.record({ method: fc.constant('DELETE'), key: anyKey }) },
  { weight: 1, arbitrary: fc.record({ method: fc.constantFrom('PUT', 'PATCH', 'POST', 'DELETE'), key: fc.option(anyKey, { nil: undefined }) }) },
)

const request = () =>
  fc.record({
    route,
    query: fc.option(fc.oneof(clientIds().map((c) => `?client_id=${encodeURIComponent(c)}`), printable.map((s) => `?${s}`)), { nil: '' }),
    token: token(),
    contentType,
    ifMatch: fc.option(headerValue, { nil: undefined }),
    ifNoneMatch: fc.option(headerValue, { nil: undefined }),
    body: body(),
  })

describe('the settings routes under generated input (fast-check)', () => {
  test('every answer is a documented status; errors are JSON {error, error_description}; rejected requests change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(request(), async (r) => {
        const headers: Record<string, string> = {}
        if (r.token) headers.authorization = `Bearer ${r.token}`
        if (r.contentType) headers['content-type'] = r.contentType
        if (r.ifMatch !== undefined) headers['if-match'] = r.ifMatch
        if (r.ifNoneMatch !== undefined) headers['if-none-match'] = r.ifNoneMatch
        const { method, key } = r.route
        const path = `/api/settings${key === undefined ? '' : '/' + key}${r.query}`
        const hasBody = method !== 'GET'
        const before = await dump(t)
        const res = await t.app.handle(
          new Request(ORIGIN + path, {
            method,
            headers,
            body: hasBody ? (typeof r.body === 'string' ? r.body : JSON.stringify(r.body)) : undefined,
          }),
        )
        expect(DOCUMENTED.has(res.status)).toBe(true)
        if (res.status >= 400) {
          expect(res.headers.get('content-type')).toBe('application/json')
          const parsed = (await res.json()) as Record<string, unknown>
          expect(Object.keys(parsed).sort()).toEqual(['error', 'error_description'])
          expect(typeof parsed.error).toBe('string')
          expect(typeof parsed.error_description).toBe('string')
          expect(await dump(t)).toEqual(before)
        } else if (method !== 'POST' && method !== 'DELETE') {
          expect(await dump(t)).toEqual(before)
        }
      }),
      { numRuns: 800 },
    )
  }, 120_000)
})
