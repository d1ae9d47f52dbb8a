/** Browser steps for the sessions tests: a sign-in with its own User-Agent and client address, and its cookie jar. */
import { PASSWORD, cookieHeader, cookiesFrom, csrfFrom, form, type TestApp } from '../helpers'
import { peerAddresses } from '../../src/web/client-address'

export const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
export const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'

export type Jar = Record<string, string>

/** A request from a browser: its cookies, User-Agent and socket address. */
export function browse(t: TestApp, path: string, jar: Jar, opts: { ua?: string; address?: string; method?: string; body?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { cookie: cookieHeader(jar), 'user-agent': opts.ua ?? CHROME_LINUX }
  if (opts.body) headers['content-type'] = 'application/x-www-form-urlencoded'
  const request = new Request('http://localhost:3000' + path, { method: opts.method ?? (opts.body ? 'POST' : 'GET'), headers, body: opts.body && form(opts.body) })
  peerAddresses.set(request, opts.address ?? '192.0.2.10')
  return t.app.handle(request)
}

/** Signs in through /login from a browser (its device cookie kept in `jar` when given); returns the jar. */
export async function signInFrom(t: TestApp, opts: { ua?: string; address?: string; jar?: Jar; email?: string } = {}): Promise<Jar> {
  const jar = { ...(opts.jar ?? {}) }
  delete jar.lk_session
  const page = await browse(t, '/login', jar, opts)
  cookiesFrom(page, jar)
  const res = await browse(t, '/login', jar, { ...opts, body: { email: opts.email ?? 'ann@example.com', password: PASSWORD, csrf_token: csrfFrom(await page.text()) } })
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`)
  return cookiesFrom(res, jar)
}

export const signedIn = async (t: TestApp, jar: Jar) => (await browse(t, '/account', jar)).status === 200
