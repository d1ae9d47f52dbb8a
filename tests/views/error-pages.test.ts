import { describe, expect, test } from 'bun:test'
import { pageHeaders } from '../../src/views/page'
import { cookieHeader, createTestApp, signedInApp } from '../helpers'

/** What Chromium sends when a person opens a link or types an address. */
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8' }
const HTML_HEADERS = pageHeaders()

function expectPageHeaders(res: Response) {
  for (const [name, value] of Object.entries(HTML_HEADERS)) expect([name, res.headers.get(name)]).toEqual([name, value])
}

const heading = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1]

// SPEC "Brand and language" → "Every screen": a browser that asks for a page which does not
// exist, or meets an error, gets an HTML page; /api/* and programs keep SPEC "Errors"' JSON.
describe('error pages for browsers (issue 36)', () => {
  test('a browser asking for an unknown page → 404, an HTML page in the layout with the page headers', async () => {
    const t = await createTestApp()
    const res = await t.handle('/no-such-page', { headers: BROWSER })
    expect(res.status).toBe(404)
    expectPageHeaders(res)
    const html = await res.text()
    expect(html).toStartWith('<!doctype html><html lang="en" dir="ltr">')
    expect(heading(html)).toBe('Page not found')
    expect(html).toContain('<title>Page not found · Latchkey</title>')
    expect(html).toMatch(/<link rel="stylesheet" href="\/assets\/app\.css\?v=[\w-]{16}"\/>/)
    expect(html).toContain('<a href="/">Go to the start page</a>')
    // The path is not echoed back: a crafted link cannot put its words on the page.
    expect(html).not.toContain('no-such-page')
  })

  test('a browser using a wrong method → 405 page, Allow kept', async () => {
    const t = await createTestApp()
    const res = await t.handle('/signup', { method: 'PUT', headers: BROWSER })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, POST')
    expectPageHeaders(res)
    const html = await res.text()
    expect(heading(html)).toBe('Method not allowed')
    expect(html).toContain('<p>PUT is not allowed here.</p>')
  })

  test('/admin refused to a signed-in non-admin browser is the very same 404 page as an unknown path', async () => {
    const { t, jar } = await signedInApp()
    const headers = { ...BROWSER, cookie: cookieHeader(jar) }
    const admin = await t.handle('/admin/users', { headers })
    const unknown = await t.handle('/admin/nothing-here', { headers })
    const elsewhere = await t.handle('/nothing-here', { headers })
    expect([admin.status, unknown.status, elsewhere.status]).toEqual([404, 404, 404])
    const body = await admin.text()
    expect(heading(body)).toBe('Page not found')
    expect(await unknown.text()).toBe(body)
    expect(await elsewhere.text()).toBe(body)
    expect(Object.fromEntries(admin.headers)).toEqual(Object.fromEntries(elsewhere.headers))
  })

  test('/api/*, .well-known, /healthz and programs (no Accept, */*, application/json) keep the JSON errors', async () => {
    const t = await createTestApp()
    const json = async (res: Response) => [res.status, res.headers.get('content-type'), await res.json()]
    expect(await json(await t.handle('/api/nothing', { headers: BROWSER }))).toEqual([404, 'application/json', { error: 'not_found', error_description: 'no route for GET /api/nothing' }])
    expect(await json(await t.handle('/.well-known/nothing', { headers: BROWSER }))).toEqual([404, 'application/json', { error: 'not_found', error_description: 'no route for GET /.well-known/nothing' }])
    const health = await t.handle('/healthz', { method: 'POST', headers: BROWSER })
    expect(health.headers.get('allow')).toBe('GET')
    expect(await json(health)).toEqual([405, 'application/json', { error: 'method_not_allowed', error_description: 'POST is not allowed here' }])
    for (const accept of [undefined, '*/*', 'application/json', 'text/html;q=0, application/json']) {
      const res = await t.handle('/no-such-page', { headers: accept ? { accept } : {} })
      expect([accept, ...(await json(res))]).toEqual([accept, 404, 'application/json', { error: 'not_found', error_description: 'no route for GET /no-such-page' }])
    }
  })

  test('an unexpected fault met by a browser on a page → 500 page with the request id', async () => {
    const { t, jar } = await signedInApp()
    await t.rows('DROP TABLE audit_events')
    const res = await t.handle('/account', { headers: { ...BROWSER, cookie: cookieHeader(jar) } })
    expect(res.status).toBe(500)
    expectPageHeaders(res)
    const html = await res.text()
    expect(heading(html)).toBe('Something went wrong')
    expect(html).toMatch(/An unexpected error occurred; it was logged with request id [a-z0-9]+-[a-z0-9]+\./)
  })
})

describe('the favicon', () => {
  test('GET /favicon.svg and /favicon.ico: the same SVG, same-origin, with a CSP of its own; every page links it', async () => {
    const t = await createTestApp()
    const svg = await t.handle('/favicon.svg')
    const ico = await t.handle('/favicon.ico')
    for (const res of [svg, ico]) {
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/svg+xml')
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'")
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    }
    const body = await svg.text()
    expect(body).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"')
    expect(await ico.text()).toBe(body)
    expect(body).not.toContain('<script')
    expect(await (await t.handle('/login')).text()).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml"/>')
  })
})
