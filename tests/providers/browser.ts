/** A browser for the in-process provider tests: cookies per host, redirects followed across Latchkey (in process) and a real upstream provider. */
import { ORIGIN, type TestApp } from '../helpers'

export class Browser {
  readonly jars = new Map<string, Map<string, string>>()

  constructor(
    private readonly t: TestApp,
    private readonly upstreamHosts: () => string[],
  ) {}

  jar(host: string): Map<string, string> {
    let jar = this.jars.get(host)
    if (!jar) this.jars.set(host, (jar = new Map()))
    return jar
  }

  /** A form on a Latchkey page, submitted with the page's CSRF token (and followed). */
  async submit(page: string, action: string, fields: Record<string, string> = {}) {
    const html = await (await this.request(page)).text()
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!
    return this.go(action, { method: 'POST', body: new URLSearchParams({ ...fields, csrf_token: csrf }) })
  }

  /** Latchkey's cookies, as a plain record (for postForm and the like). */
  get latchkey(): Record<string, string> {
    return Object.fromEntries(this.jar(new URL(ORIGIN).host))
  }

  private keep(host: string, response: Response) {
    const jar = this.jar(host)
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0]!
      const at = pair.indexOf('=')
      const [name, value] = [pair.slice(0, at), pair.slice(at + 1)]
      if (value === '' || /max-age=0\b/i.test(line)) jar.delete(name)
      else jar.set(name, value)
    }
  }

  /** One request, cookies sent and kept. */
  async request(url: string, init: { method?: string; body?: URLSearchParams } = {}): Promise<Response> {
    const target = new URL(url, ORIGIN)
    const cookie = [...this.jar(target.host)].map(([k, v]) => `${k}=${v}`).join('; ')
    const headers: Record<string, string> = cookie ? { cookie } : {}
    if (init.body) headers['content-type'] = 'application/x-www-form-urlencoded'
    const response =
      target.origin === ORIGIN
        ? await this.t.handle(target.pathname + target.search, { method: init.method ?? 'GET', headers, body: init.body })
        : await fetch(target, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual' })
    this.keep(target.host, response)
    return response
  }

  /**
   * Follows redirects while they stay on Latchkey or the upstream providers; returns the last
   * answer and, when a redirect left them (an app's callback), where it went.
   */
  async go(url: string, init: { method?: string; body?: URLSearchParams; stopAt?: (next: URL) => boolean } = {}): Promise<{ response: Response; left?: string; at: string }> {
    let at = new URL(url, ORIGIN).href
    let response = await this.request(at, init)
    for (let hops = 0; hops < 20 && response.status >= 300 && response.status < 400; hops++) {
      const next = new URL(response.headers.get('location')!, at)
      if ((next.origin !== ORIGIN && !this.upstreamHosts().includes(next.host)) || init.stopAt?.(next)) return { response, left: next.href, at }
      at = next.href
      response = await this.request(at)
    }
    return { response, at }
  }
}
