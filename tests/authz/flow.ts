/** Forward-auth test helpers: a proxy's checks, and a browser's sign-in through /authz/start to a site's cookie. */
import { expect } from 'bun:test'
import { ORIGIN, cookieHeader, handleFrom, type TestApp } from '../helpers'

export const PROXY = '10.0.0.2'
export const PROXIES = { TRUSTED_PROXIES: '10.0.0.0/24' }
export const BROWSER = '203.0.113.9'
export type Jar = Record<string, string>

/** The X-Forwarded-* headers Traefik sends for `url` (a page load unless `extra` says otherwise). */
export function forwardedFor(url: string, extra: Record<string, string> = {}): Record<string, string> {
  const u = new URL(url)
  const uri = url.slice(url.indexOf('/', u.protocol.length + 2))
  return { 'x-forwarded-method': 'GET', 'x-forwarded-proto': u.protocol.slice(0, -1), 'x-forwarded-host': u.host, 'x-forwarded-uri': uri, 'x-forwarded-for': BROWSER, accept: 'text/html,application/xhtml+xml', ...extra }
}

export function forwardAuth(t: TestApp, headers: Record<string, string>, peer = PROXY, path = '/api/authz/forward-auth') {
  return handleFrom(t, peer, path, { headers })
}

export function authRequest(t: TestApp, headers: Record<string, string>, peer = PROXY) {
  return handleFrom(t, peer, '/api/authz/auth-request', { headers })
}

/** The check for `url` carrying the site cookie `cookie` (`name=value`). */
export function checkWith(t: TestApp, url: string, cookie?: string, extra: Record<string, string> = {}) {
  return forwardAuth(t, forwardedFor(url, cookie ? { cookie, ...extra } : extra))
}

/** The state cookie a test browser got at the site's /.latchkey/start (any value of the shape will do in-process). */
export const STATE = 'test-state-'.padEnd(43, 'x')
export const stateCookieFor = (url: URL | string, state = STATE) => `${new URL(url).protocol === 'https:' ? '__Host-lk_state' : 'lk_state'}=${state}`

export const startPath = (rd: string, state = STATE) => `/authz/start?rd=${encodeURIComponent(rd)}&state=${state}`

/** /authz/start for a signed-in browser: the 302 to the site's callback. */
export async function startAt(t: TestApp, jar: Jar, rd: string): Promise<URL> {
  const started = await handleFrom(t, BROWSER, startPath(rd), { headers: { cookie: cookieHeader(jar) } })
  expect(started.status).toBe(302)
  return new URL(started.headers.get('location')!)
}

/** The site's /.latchkey/callback as the proxy passes it on (X-Forwarded-Host = the site's host), from the browser holding `state`. */
export function callback(t: TestApp, to: URL, host = to.host, peer = PROXY, state: string | undefined = STATE) {
  const headers: Record<string, string> = { 'x-forwarded-host': host, 'x-forwarded-proto': to.protocol.slice(0, -1) }
  if (state !== undefined) headers.cookie = stateCookieFor(to, state)
  return handleFrom(t, peer, to.pathname + to.search, { headers })
}

/** A refused callback: the code is spent, no site cookie, and this browser starts again at Latchkey under a fresh state. */
export function expectStartedAgain(back: Response, rd: string): string {
  expect(back.status).toBe(302)
  const to = new URL(back.headers.get('location')!)
  expect(to.origin + to.pathname).toBe(`${ORIGIN}/authz/start`)
  expect(to.searchParams.get('rd')).toBe(rd)
  const state = to.searchParams.get('state')!
  expect(back.headers.getSetCookie()).toEqual([`${new URL(rd).protocol === 'https:' ? '__Host-lk_state' : 'lk_state'}=${state}; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600${new URL(rd).protocol === 'https:' ? '; Secure' : ''}`])
  expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/)
  return state
}

/** Signed in (jar) → the site cookie for `rd`'s host, as `name=value`. */
export async function siteSession(t: TestApp, jar: Jar, rd: string): Promise<string> {
  const to = await startAt(t, jar, rd)
  const back = await callback(t, to)
  expect(back.status).toBe(302)
  expect(back.headers.get('location')).toBe(rd)
  expect(back.headers.getSetCookie()[1]).toStartWith(`${new URL(rd).protocol === 'https:' ? '__Host-lk_state' : 'lk_state'}=; `)
  return back.headers.getSetCookie()[0]!.split(';')[0]!
}

export { ORIGIN }
