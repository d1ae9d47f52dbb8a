import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { LookupAddress } from 'node:dns'
import { METADATA_REFUSED, MetadataClients, freshFor } from '../../src/oauth/client-metadata'
import { s256 } from '../../src/lib/crypto'
import { FetchRefused, safeFetch } from '../../src/lib/safe-fetch'
import { addUser, authorizePath, capturingLogger, cookieHeader, createTestApp, csrfFrom, postForm, signIn, tokenRequest, type TestApp } from '../helpers'
import { DocumentServer } from './document-server'

const docs = new DocumentServer()
afterAll(() => docs.stop())

const VERIFIER = 'dBjftJeZ4CVP-mJ92K9TsBkC7ZBh0fhI4BL4aVL5y6Y'
const CHALLENGE = s256(VERIFIER)
const GOOD = { client_name: 'Claude', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }

/** A resolver answering every name with `addresses`: hosts that resolve to private addresses. */
function resolvingTo(...addresses: string[]) {
  return ((_host: string, _options: unknown, callback: (error: null, list: LookupAddress[]) => void) =>
    callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))) as never
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(FetchRefused)
    return (error as Error).message
  }
  throw new Error('the fetch was not refused')
}

describe('the metadata-document fetcher refuses what could reach inside (SSRF)', () => {
  const open = { allowHosts: [docs.host], ca: docs.tls.cert }

  test('only https; an allowed host may be plain http', async () => {
    expect(await refusal(safeFetch(new URL('http://client.example/doc.json'), { allowHosts: [] }))).toBe('only https:// URLs are fetched')
    expect(await refusal(safeFetch(new URL('ftp://client.example/doc.json'), open))).toBe('only https:// URLs are fetched')
  })

  test('IP literals of loopback, private, link-local, metadata and mapped addresses are refused before any connection', async () => {
    for (const host of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '172.16.0.5', '169.254.169.254', '100.100.100.200', '[::1]', '[fd00:ec2::254]', '[fe80::1]', '[::ffff:127.0.0.1]', '[::7f00:1]', '[::ffff:0:7f00:1]', '[64:ff9b:1::a9fe:a9fe]', '[2002:a9fe:a9fe::]', '[2001::1]', '0.0.0.0'])
      expect(await refusal(safeFetch(new URL(`https://${host}/doc.json`), { allowHosts: [] }))).toBe(`${new URL(`https://${host}/`).hostname} is not a public address`)
  })

  test('a host name that resolves to a private address (any of them) is refused: checked on what the name resolves to', async () => {
    const url = new URL(docs.url('/doc.json'))
    expect(await refusal(safeFetch(url, { allowHosts: [], ca: docs.tls.cert }))).toBe('localhost resolves to an address that is not public')
    for (const addresses of [['10.0.0.7'], ['93.184.216.34', '127.0.0.1'], ['::1'], ['169.254.169.254'], ['::7f00:1'], ['2606:4700::1', '::FFFF:0:127.0.0.1'], ['fe80::1%eth0']]) {
      const message = await refusal(safeFetch(new URL('https://rebind.example/doc.json'), { allowHosts: [], lookup: resolvingTo(...addresses) }))
      expect(message).toBe('rebind.example resolves to an address that is not public')
    }
  })

  test('an allowed host is fetched over TLS; redirects are not followed; 64 KiB at most; 5 s in all', async () => {
    docs.route('/ok.json', () => Response.json({ ok: true }, { headers: { 'cache-control': 'max-age=60' } }))
    expect(await safeFetch(new URL(docs.url('/ok.json')), open)).toEqual({ body: '{"ok":true}', cacheControl: 'max-age=60', status: 200, contentType: 'application/json;charset=utf-8' })
    docs.route('/moved.json', () => Response.redirect(docs.url('/ok.json'), 302))
    expect(await refusal(safeFetch(new URL(docs.url('/moved.json')), open))).toBe('answered 302: redirects are not followed')
    docs.route('/big.json', () => new Response('x'.repeat(65_537)))
    expect(await refusal(safeFetch(new URL(docs.url('/big.json')), open))).toBe('is larger than 65536 bytes')
    // Streamed without a length: counted as it arrives.
    docs.route('/stream.json', () => new Response(new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array(40_000)), c.enqueue(new Uint8Array(40_000)), c.close()) })))
    expect(await refusal(safeFetch(new URL(docs.url('/stream.json')), open))).toBe('is larger than 65536 bytes')
    docs.route('/slow.json', () => new Promise<Response>(() => {}))
    const started = performance.now()
    expect(await refusal(safeFetch(new URL(docs.url('/slow.json')), { ...open, timeoutMs: 300 }))).toBe('did not answer within 0.3 s')
    expect(performance.now() - started).toBeLessThan(3000)
    docs.route('/missing.json', () => new Response('no', { status: 404 }))
    expect(await refusal(safeFetch(new URL(docs.url('/missing.json')), open))).toBe('answered 404')
  })

  test('an unknown CA is refused', async () => {
    const message = await refusal(safeFetch(new URL(docs.url('/ok.json')), { allowHosts: [docs.host] }))
    expect(message).toStartWith('could not be fetched (')
  })

  test('Cache-Control: max-age up to a day, no-store and no-cache not at all, five minutes without one', () => {
    expect(freshFor('public, max-age=600')).toBe(600_000)
    expect(freshFor('max-age=31536000')).toBe(86_400_000)
    expect(freshFor('no-store')).toBe(0)
    expect(freshFor('max-age=60, no-cache')).toBe(0)
    expect(freshFor(null)).toBe(300_000)
  })
})

describe('clients met through their metadata documents', () => {
  let t: TestApp
  let jar: Record<string, string>

  beforeEach(async () => {
    docs.hits.clear()
    t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: docs.host })
    // The test CA, as NODE_EXTRA_CA_CERTS gives it to the binary.
    t.ctx.metadataClients = new MetadataClients(t.ctx, { allowHosts: [docs.host], ca: docs.tls.cert })
    await addUser(t)
    jar = await signIn(t)
  })

  const params = (clientId: string, extra: Record<string, string> = {}) => ({
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:51234/callback',
    scope: 'openid email',
    state: 's',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    ...extra,
  })
  const authorize = (clientId: string, extra: Record<string, string> = {}) => t.handle(authorizePath(params(clientId, extra)), { headers: { cookie: cookieHeader(jar) } })
  const clientRows = async () => (await t.rows('SELECT id, name, kind FROM clients')).length

  test('the consent page shows client_name and, prominently, the host; the code flow with PKCE and a random loopback port works', async () => {
    const id = docs.document('/claude.json', GOOD)
    const page = await authorize(id)
    const html = await page.text()
    expect(page.status).toBe(200)
    expect(html).toContain('<span>Claude</span> wants to access your account')
    expect(html).toContain(`From <strong>${docs.host}</strong> — allow it only if you trust that site.`)
    const allow = await postForm(t, '/oauth/authorize', { ...params(id), csrf_token: csrfFrom(html), decision: 'allow' }, jar)
    const code = new URL(allow.headers.get('location')!).searchParams.get('code')!
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code, client_id: id, redirect_uri: 'http://127.0.0.1:51234/callback', code_verifier: VERIFIER })
    expect(res.status).toBe(200)
    const { id_token } = (await res.json()) as { id_token: string }
    expect(JSON.parse(Buffer.from(id_token.split('.')[1]!, 'base64url').toString()).aud).toBe(id)
    expect(await t.rows('SELECT id, name, kind, secret_hash FROM clients')).toEqual([{ id, name: 'Claude', kind: 'metadata', secret_hash: null }])
  })

  test('the document is cached by its Cache-Control, then fetched again', async () => {
    const id = docs.document('/cached.json', GOOD, { 'cache-control': 'max-age=120' })
    for (let i = 0; i < 3; i++) expect((await authorize(id)).status).toBe(200)
    expect(docs.hits.get('/cached.json')).toBe(1)
    t.clock.advance(121_000)
    docs.document('/cached.json', { ...GOOD, client_name: 'Claude 2' })
    expect(await (await authorize(id)).text()).toContain('<span>Claude 2</span> wants to access')
    expect(docs.hits.get('/cached.json')).toBe(2)
  })

  test('100 parallel authorize requests for one new client fetch its document once', async () => {
    const id = docs.document('/burst.json', GOOD)
    const answers = await Promise.all(Array.from({ length: 100 }, () => authorize(id)))
    expect(answers.map((r) => r.status)).toEqual(Array(100).fill(200))
    expect(docs.hits.get('/burst.json')).toBe(1)
  })

  test('a bad document gets the 400 page (the reason only in the log) and nothing is stored', async () => {
    const logged = capturingLogger()
    t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: docs.host }, { log: logged.log })
    t.ctx.metadataClients = new MetadataClients(t.ctx, { allowHosts: [docs.host], ca: docs.tls.cert })
    await addUser(t)
    jar = await signIn(t)
    const cases: Array<[string, () => string, string]> = [
      ['another client_id', () => docs.document('/a.json', { ...GOOD, client_id: docs.url('/other.json') }), 'names another client_id than its own URL'],
      ['plain-http redirect', () => docs.document('/b.json', { ...GOOD, redirect_uris: ['http://app.example/cb'] }), 'has a plain-http redirect URI that is not loopback: http://app.example/cb'],
      ['invalid JSON', () => docs.route('/c.json', () => new Response('{"client_id":')), 'is not valid JSON'],
      ['a secret-based method', () => docs.document('/d.json', { ...GOOD, token_endpoint_auth_method: 'client_secret_basic' }), 'must set token_endpoint_auth_method to &quot;none&quot;'],
      ['no redirect URIs', () => docs.document('/e.json', { ...GOOD, redirect_uris: [] }), 'must list 1 to 20 redirect_uris'],
      ['a redirect', () => docs.route('/f.json', () => Response.redirect(docs.url('/claude.json'), 301)), 'answered 301: redirects are not followed'],
    ]
    for (const [, serve, reason] of cases) {
      const url = serve()
      const res = await authorize(url)
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(await res.text()).toContain(METADATA_REFUSED.replace("'", '&#x27;'))
      expect(logged.entries().filter((e) => e.msg === 'client metadata document refused').at(-1)).toMatchObject({ url, reason: reason.replaceAll('&quot;', '"') })
    }
    expect(await clientRows()).toBe(0)
  })

  test('a redirect_uri the document does not list is the 400 page, never a redirect', async () => {
    const id = docs.document('/claude.json', GOOD)
    const res = await authorize(id, { redirect_uri: 'https://evil.example/cb' })
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
  })

  test('a host not in CLIENT_ID_METADATA_ALLOW_HOSTS on a loopback address is refused', async () => {
    const strict = await createTestApp()
    strict.ctx.metadataClients = new MetadataClients(strict.ctx, { allowHosts: [], ca: docs.tls.cert })
    await addUser(strict)
    const cookies = await signIn(strict)
    const res = await strict.handle(authorizePath(params(docs.document('/claude.json', GOOD))), { headers: { cookie: cookieHeader(cookies) } })
    expect(res.status).toBe(400)
    expect(await res.text()).toContain(METADATA_REFUSED.replace("'", '&#x27;'))
  })

  test('a refused fetch, a closed port, a timeout and a bad document all get the same page: no address, port or errno; the log has the detail', async () => {
    const logged = capturingLogger()
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const closedPort = closed.port
    await closed.stop(true)
    const app = await createTestApp({}, { log: logged.log })
    // The documents' server and the closed port may be fetched; 10.0.0.7 (a resolver's answer) may not.
    app.ctx.metadataClients = new MetadataClients(app.ctx, { allowHosts: [docs.host, `localhost:${closedPort}`], ca: docs.tls.cert, timeoutMs: 300 })
    await addUser(app)
    const cookies = await signIn(app)
    const strict = new MetadataClients(app.ctx, { allowHosts: [], lookup: ((_h: string, _o: unknown, cb: (e: null, l: LookupAddress[]) => void) => cb(null, [{ address: '::ffff:0:a00:7', family: 6 }])) as never })
    docs.route('/slow.json', () => new Promise<Response>(() => {}))
    const cases: Array<[string, string, RegExp, MetadataClients?]> = [
      ['https://inside.example/doc.json', 'refused', /^inside\.example resolves to an address that is not public$/, strict],
      [`https://localhost:${closedPort}/doc.json`, 'closed port', new RegExp(`^could not be fetched \\(.*(ECONNREFUSED|refused).*\\)$`, 'i')],
      [docs.url('/slow.json'), 'timeout', /^did not answer within 0\.3 s$/],
      [docs.document('/bad.json', { ...GOOD, redirect_uris: 'http://app.example/cb' }), 'bad document', /^must list 1 to 20 redirect_uris$/],
    ]
    const pages: string[] = []
    for (const [url, , reason, clients] of cases) {
      if (clients) app.ctx.metadataClients = clients
      const res = await app.handle(authorizePath(params(url)), { headers: { cookie: cookieHeader(cookies) } })
      if (clients) app.ctx.metadataClients = new MetadataClients(app.ctx, { allowHosts: [docs.host, `localhost:${closedPort}`], ca: docs.tls.cert, timeoutMs: 300 })
      expect(res.status).toBe(400)
      const html = await res.text()
      expect(html).toContain(METADATA_REFUSED.replace("'", '&#x27;'))
      for (const leak of [String(closedPort), new URL(docs.url('/')).port, 'ECONNREFUSED', '127.0.0.1', '10.0.0.7', 'a00:7', 'inside.example', '0.3 s', 'redirect_uris'])
        expect(html).not.toContain(leak)
      pages.push(html.replace(/name="csrf_token" value="[^"]*"/g, '').replace(/nonce="[^"]*"/g, ''))
      const line = logged.entries().filter((e) => e.msg === 'client metadata document refused').at(-1)!
      expect(line.url).toBe(url)
      expect(line.reason as string).toMatch(reason)
    }
    // One page, whatever the cause.
    expect(new Set(pages).size).toBe(1)
    expect(logged.text()).toContain(`:${closedPort}`)
  })

  test('CLIENT_ID_METADATA_DOCUMENTS=off: a URL client_id is an unknown application', async () => {
    const off = await createTestApp({ CLIENT_ID_METADATA_DOCUMENTS: 'off', CLIENT_ID_METADATA_ALLOW_HOSTS: docs.host })
    const res = await off.handle(authorizePath(params(docs.document('/claude.json', GOOD))))
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('Unknown application')
    expect(docs.hits.get('/claude.json')).toBeUndefined()
    const metadata = (await (await off.handle('/.well-known/oauth-authorization-server')).json()) as Record<string, unknown>
    expect(metadata.client_id_metadata_document_supported).toBe(false)
  })

  test('fetches are throttled per host: the eleventh new document within a minute waits', async () => {
    for (let i = 0; i < 10; i++) expect((await authorize(docs.document(`/n${i}.json`, GOOD))).status).toBe(200)
    const res = await authorize(docs.document('/n10.json', GOOD))
    expect(res.status).toBe(429)
    expect(await res.text()).toContain(`Too many metadata documents were fetched from ${docs.host} in the last minute.`)
    t.clock.advance(60_000)
    expect((await authorize(docs.document('/n10.json', GOOD))).status).toBe(200)
  })
})

describe('metadata-document clients nobody uses do not pile up', () => {
  test('the purge deletes one whose document went stale with no consent, code or authorization; one in use stays', async () => {
    docs.hits.clear()
    const t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: docs.host })
    t.ctx.metadataClients = new MetadataClients(t.ctx, { allowHosts: [docs.host], ca: docs.tls.cert })
    const user = await addUser(t)
    const jar = await signIn(t)
    const idle = docs.document('/idle.json', GOOD, { 'cache-control': 'max-age=60' })
    const used = docs.document('/used.json', GOOD, { 'cache-control': 'max-age=60' })
    for (const id of [idle, used]) {
      const res = await t.handle(authorizePath({ client_id: id, redirect_uri: 'http://127.0.0.1:5000/callback', scope: 'openid', state: 's', code_challenge: CHALLENGE, code_challenge_method: 'S256' }), { headers: { cookie: cookieHeader(jar) } })
      expect(res.status).toBe(200)
    }
    await t.store.grants.issueCode({ codeHash: 'h', clientId: used, userId: user.id, redirectUri: 'http://127.0.0.1/callback', scope: 'openid', codeChallenge: null, expiresAt: t.clock.now() + 3_600_000, nonce: null, authTime: null, amr: null, resource: null }, undefined)
    const purge = () => t.store.clients.deleteUnusedClients(t.clock.now() - 30 * 86_400_000, t.clock.now())
    expect(await purge()).toBe(0) // both documents are fresh
    t.clock.advance(61_000)
    expect(await purge()).toBe(1)
    expect(await t.rows('SELECT id FROM clients')).toEqual([{ id: used }])
  })
})
