import { beforeEach, describe, expect, test } from 'bun:test'
import { addSiteRule, createSite } from '../../src/authz/sites'
import { addUser, createTestApp, handleFrom, signIn, type TestApp } from '../helpers'
import { PROXIES, siteSession } from './flow'

/**
 * Traefik by its headers (issue 35: "Traefik's contract is the same headers as Caddy's: test it by
 * its headers"). What Traefik (v2.x/v3.x) sends the check is reproduced here step by step from its
 * source, as the README's configuration sets it up:
 * - the entry point (pkg/middlewares/forwardedheaders): a client not in
 *   `forwardedHeaders.trustedIPs` loses every X-Forwarded-* header it sent (and X-Real-Ip); then
 *   X-Forwarded-Proto, -Port, -Host, -Server and X-Real-Ip are set where missing;
 * - forwardAuth (pkg/middlewares/auth/forward.go, writeHeader): a GET to `address` carrying every
 *   header of the request but the hop-by-hop ones, with X-Forwarded-For = the peer (after the
 *   chain it had, with trustForwardHeader), and X-Forwarded-Method, -Proto, -Host, -Uri taken from
 *   the request itself — or, with trustForwardHeader, from what the entry point left;
 * - on a 2xx, each of `authResponseHeaders` is deleted from the request to the app and set from
 *   the check's answer; anything else is the browser's answer.
 */
const TRAEFIK = '10.0.0.2'
/** A load balancer in front of Traefik, terminating TLS (in Traefik's trustedIPs and Latchkey's TRUSTED_PROXIES). */
const BALANCER = '10.0.0.5'
const CLIENT = '203.0.113.9'
const AUTH_RESPONSE_HEADERS = ['Remote-User', 'Remote-Email', 'Remote-Name', 'Remote-Groups', 'Remote-Id', 'Remote-Jwt']
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailers', 'transfer-encoding', 'upgrade']
const ENTRY_POINT_DROPS = ['x-forwarded-proto', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-server', 'x-forwarded-uri', 'x-forwarded-method', 'x-forwarded-tls-client-cert', 'x-forwarded-tls-client-cert-info', 'x-real-ip']

/** A request as it reaches Traefik: from `peer`, over TLS or not, to `url` (its Host and request URI). */
interface Incoming {
  method: string
  url: string
  headers: Record<string, string>
  peer: string
  tls: boolean
}

/** Traefik's entry point (forwardedheaders.XForwarded): untrusted clients' X-Forwarded-* go, then its own are set. */
function entryPoint(req: Incoming, trustedIPs: readonly string[]): Record<string, string> {
  const h: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers)) h[k.toLowerCase()] = v
  if (!trustedIPs.includes(req.peer)) for (const name of ENTRY_POINT_DROPS) delete h[name]
  const url = new URL(req.url)
  h['x-real-ip'] ??= req.peer
  h['x-forwarded-proto'] ??= req.tls ? 'https' : 'http'
  h['x-forwarded-port'] ??= url.port || (h['x-forwarded-proto'] === 'https' || req.tls ? '443' : '80')
  h['x-forwarded-host'] ??= url.host
  h['x-forwarded-server'] = 'traefik'
  return h
}

/** forwardAuth's request to the check (forward.go writeHeader): every header but hop-by-hop, and the X-Forwarded-* it sets. */
function forwardAuthRequest(req: Incoming, h: Record<string, string>, trustForwardHeader: boolean): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(h)) if (!HOP_BY_HOP.includes(k)) out[k] = v
  const url = new URL(req.url)
  out['x-forwarded-for'] = trustForwardHeader && h['x-forwarded-for'] ? `${h['x-forwarded-for']}, ${req.peer}` : req.peer
  out['x-forwarded-method'] = trustForwardHeader && h['x-forwarded-method'] ? h['x-forwarded-method'] : req.method
  out['x-forwarded-proto'] = trustForwardHeader && h['x-forwarded-proto'] ? h['x-forwarded-proto'] : req.tls ? 'https' : 'http'
  out['x-forwarded-host'] = trustForwardHeader && h['x-forwarded-host'] ? h['x-forwarded-host'] : url.host
  out['x-forwarded-uri'] = trustForwardHeader && h['x-forwarded-uri'] ? h['x-forwarded-uri'] : url.pathname + url.search
  return out
}

/** Traefik in front of an app, `trustedIPs` its entry point's, asking the check; what the browser or the app gets. */
async function throughTraefik(t: TestApp, req: Incoming, opts: { trustForwardHeader: boolean; trustedIPs?: readonly string[] }) {
  const asked = forwardAuthRequest(req, entryPoint(req, opts.trustedIPs ?? []), opts.trustForwardHeader)
  const answer = await handleFrom(t, TRAEFIK, '/api/authz/forward-auth', { headers: asked })
  if (answer.status < 200 || answer.status > 299) return { answer, app: undefined, asked }
  // authResponseHeaders: deleted from the app's request, then set from the answer.
  const app: Record<string, string> = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]))
  for (const name of AUTH_RESPONSE_HEADERS) {
    delete app[name.toLowerCase()]
    const value = answer.headers.get(name)
    if (value !== null) app[name.toLowerCase()] = value
  }
  return { answer, app, asked }
}

const PAGE = { accept: 'text/html,application/xhtml+xml' }
let t: TestApp
let annId: string

beforeEach(async () => {
  t = await createTestApp(PROXIES)
  annId = (await addUser(t, 'ann@example.com', 'Ann Lee')).id
  await createSite(t.store, { host: 'photos.example.com', name: 'Photos' }, t.clock.now())
})

describe('Traefik forwardAuth, by its headers', () => {
  for (const trustForwardHeader of [false, true]) {
    test(`trustForwardHeader ${trustForwardHeader}: a browser with the site cookie passes; the app gets Remote-* (authResponseHeaders), the client's own overwritten`, async () => {
      const cookie = await siteSession(t, await signIn(t), 'https://photos.example.com/')
      const req = { method: 'GET', url: 'https://photos.example.com/albums/1?sort=new', headers: { ...PAGE, cookie, 'remote-user': 'admin@example.com', 'remote-groups': 'admins' }, peer: CLIENT, tls: true }
      const { answer, app, asked } = await throughTraefik(t, req, { trustForwardHeader })
      expect(asked).toMatchObject({ 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'photos.example.com', 'x-forwarded-uri': '/albums/1?sort=new', 'x-forwarded-for': CLIENT })
      expect(answer.status).toBe(200)
      expect(app).toEqual({ ...PAGE, cookie, 'remote-user': 'ann@example.com', 'remote-email': 'ann@example.com', 'remote-name': 'Ann Lee', 'remote-groups': '', 'remote-id': annId, 'remote-jwt': '' })
    })

    test(`trustForwardHeader ${trustForwardHeader}: not signed in, a page load goes to the site's /.latchkey/start (port kept), a POST with 303, a script gets 401`, async () => {
      const get = await throughTraefik(t, { method: 'GET', url: 'https://photos.example.com:8443/albums/1', headers: PAGE, peer: CLIENT, tls: true }, { trustForwardHeader })
      expect([get.answer.status, get.answer.headers.get('location')]).toEqual([302, `https://photos.example.com:8443/.latchkey/start?rd=${encodeURIComponent('https://photos.example.com:8443/albums/1')}`])
      const post = await throughTraefik(t, { method: 'POST', url: 'https://photos.example.com/albums/1', headers: PAGE, peer: CLIENT, tls: true }, { trustForwardHeader })
      expect(post.answer.status).toBe(303)
      const api = await throughTraefik(t, { method: 'GET', url: 'https://photos.example.com/api/items', headers: { accept: 'application/json' }, peer: CLIENT, tls: true }, { trustForwardHeader })
      expect([api.answer.status, api.answer.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="https://photos.example.com"'])
    })

    test(`trustForwardHeader ${trustForwardHeader}: a client's forged X-Forwarded-* never decide (the entry point drops them; forwardAuth sets its own)`, async () => {
      await addSiteRule(t.store, 'photos.example.com', { paths: ['^/public/'], policy: 'bypass' })
      await createSite(t.store, { host: 'open.example.org', name: 'Open', policy: 'bypass' }, t.clock.now())
      const forged = { ...PAGE, 'x-forwarded-uri': '/public/x', 'x-forwarded-host': 'open.example.org', 'x-forwarded-method': 'OPTIONS', 'x-forwarded-proto': 'http', 'x-forwarded-for': '10.0.0.9' }
      const { answer, asked } = await throughTraefik(t, { method: 'GET', url: 'https://photos.example.com/admin', headers: forged, peer: CLIENT, tls: true }, { trustForwardHeader })
      expect(asked).toMatchObject({ 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'photos.example.com', 'x-forwarded-uri': '/admin', 'x-forwarded-for': CLIENT })
      expect([answer.status, answer.headers.get('location')]).toEqual([302, `https://photos.example.com/.latchkey/start?rd=${encodeURIComponent('https://photos.example.com/admin')}`])
      // The rule's own path passes (what the bypass is for).
      expect((await throughTraefik(t, { method: 'GET', url: 'https://photos.example.com/public/x', headers: PAGE, peer: CLIENT, tls: true }, { trustForwardHeader })).answer.status).toBe(200)
    })
  }

  test('behind a TLS-terminating balancer in trustedIPs, trustForwardHeader true: its scheme and client address count', async () => {
    await addSiteRule(t.store, 'photos.example.com', { networks: ['203.0.113.0/24'], policy: 'bypass' })
    // The balancer speaks plain http to Traefik, naming the https origin and the client it saw.
    const req = { method: 'GET', url: 'http://photos.example.com/albums/1', headers: { ...PAGE, 'x-forwarded-proto': 'https', 'x-forwarded-port': '443', 'x-forwarded-for': CLIENT }, peer: BALANCER, tls: false }
    const trusting = await throughTraefik(t, req, { trustForwardHeader: true, trustedIPs: [BALANCER] })
    expect(trusting.asked).toMatchObject({ 'x-forwarded-proto': 'https', 'x-forwarded-for': `${CLIENT}, ${BALANCER}` })
    expect(trusting.answer.status).toBe(200)
    // Without trustForwardHeader Traefik names its own scheme and peer: http, the balancer — no bypass by network.
    const own = await throughTraefik(t, req, { trustForwardHeader: false, trustedIPs: [BALANCER] })
    expect(own.asked).toMatchObject({ 'x-forwarded-proto': 'http', 'x-forwarded-for': BALANCER })
    expect([own.answer.status, own.answer.headers.get('location')]).toEqual([302, `http://photos.example.com/.latchkey/start?rd=${encodeURIComponent('http://photos.example.com/albums/1')}`])
    // The same balancer's headers from a client Traefik does not trust are dropped at the entry point.
    const spoofed = await throughTraefik(t, { ...req, peer: '198.51.100.7' }, { trustForwardHeader: true, trustedIPs: [BALANCER] })
    expect(spoofed.asked).toMatchObject({ 'x-forwarded-proto': 'http', 'x-forwarded-for': '198.51.100.7' })
    expect(spoofed.answer.status).toBe(302)
  })

  test("Traefik's own address must be in TRUSTED_PROXIES: another caller with the same headers gets 403", async () => {
    const asked = forwardAuthRequest({ method: 'GET', url: 'https://photos.example.com/', headers: PAGE, peer: CLIENT, tls: true }, {}, false)
    expect((await handleFrom(t, '192.0.2.1', '/api/authz/forward-auth', { headers: asked })).status).toBe(403)
  })
})
