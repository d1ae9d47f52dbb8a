/**
 * SPEC "Sign in with another account", Sign-in: what a callback must get right or be refused — a
 * page, no session, a warn line and a sign_in.failed event. Against real oidc-provider instances;
 * the one stand-in is a man in the middle (a proxy in front of the provider) that alters an
 * id_token, as an attacker on the wire would.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { addUser, capturingLogger, type TestApp } from '../helpers'
import { CALLBACK_OF, addProvider, appWith, browserFor, failures, identitiesOf, sessionsOf, upstreamFor, verifyEmail } from './flow'
import { startUpstream, type Upstream } from './upstream'
import type { Browser } from './browser'

setDefaultTimeout(30_000)

let upstream: Upstream
let impostor: Upstream
beforeAll(async () => {
  upstream = await upstreamFor()
  // Another provider with the same client credentials: a mix-up's other half.
  impostor = await upstreamFor()
  impostor.accounts.set('u-ann', { email: 'ann@example.com', email_verified: true })
})
afterAll(async () => {
  await upstream.close()
  await impostor.close()
})

const FAILED = 'This sign-in could not be completed: it expired, was used already, or was started in another browser. Go back to the sign-in page and try again.'
const isCallback = (url: URL) => url.pathname.endsWith('/callback')

/** Ann, verified, and Acme linking by verified address: the sign-ins that must be refused would otherwise succeed. */
async function setUp(upstreams: Upstream[], provider: Upstream = upstream) {
  const logger = capturingLogger()
  const t = await appWith(upstreams, {}, { log: logger.log })
  await addUser(t)
  await verifyEmail(t, 'ann@example.com')
  await addProvider(t, provider, { linkVerifiedEmail: true })
  return { t, logger }
}

/** Runs the round trip up to the callback (not visiting it): the callback URL the provider sent. */
async function upToCallback(b: Browser, from: Upstream, account = 'u-ann', rewrite?: (authorize: URL) => URL): Promise<string> {
  from.next.account = account
  if (!rewrite) return (await b.go('/login/provider/acme', { stopAt: isCallback })).left!
  const start = await b.request('/login/provider/acme')
  const authorize = rewrite(new URL(start.headers.get('location')!))
  return (await b.go(authorize.href, { stopAt: isCallback })).left!
}

async function expectRefused(t: TestApp, logger: ReturnType<typeof capturingLogger>, response: Response, reason: RegExp, status = 400, detail = FAILED) {
  expect(response.status).toBe(status)
  expect(await response.text()).toContain(detail)
  expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(await sessionsOf(t)).toEqual([])
  const [failure] = (await failures(t)).slice(-1)
  expect(failure!.method).toBe('provider')
  expect(failure!.reason).toMatch(reason)
  const warned = logger.entries().filter((e) => e.level === 'warn' && e.msg === 'sign-in failed')
  expect(warned.at(-1)).toMatchObject({ method: 'provider', provider: 'acme' })
  expect(String(warned.at(-1)!.reason)).toMatch(reason)
}

describe('the callback', () => {
  test('a replayed state is refused (the state is good once)', async () => {
    const { t, logger } = await setUp([upstream])
    const b = browserFor(t, [upstream])
    const callback = await upToCallback(b, upstream)
    const cookie = b.jar('localhost:3000').get('lk_provider')!
    expect((await b.request(callback)).status).toBe(303)
    await t.rows('DELETE FROM sessions')
    b.jar('localhost:3000').set('lk_provider', cookie)
    await expectRefused(t, logger, await b.request(callback), /^state$/)
  })

  test('a state from another browser is refused, and spent', async () => {
    const { t, logger } = await setUp([upstream])
    const callback = await upToCallback(browserFor(t, [upstream]), upstream)
    const elsewhere = browserFor(t, [upstream])
    await expectRefused(t, logger, await elsewhere.request(callback), /^browser$/)
    expect(await t.rows('SELECT state_hash FROM provider_states')).toEqual([])
  })

  test('a sign-in older than 10 minutes is refused', async () => {
    const { t, logger } = await setUp([upstream])
    const b = browserFor(t, [upstream])
    const callback = await upToCallback(b, upstream)
    t.clock.advance(10 * 60_000 + 1)
    await expectRefused(t, logger, await b.request(callback), /^state$/)
  })

  test('a wrong nonce in the id_token is refused', async () => {
    const { t, logger } = await setUp([upstream])
    const b = browserFor(t, [upstream])
    const callback = await upToCallback(b, upstream, 'u-ann', (authorize) => (authorize.searchParams.set('nonce', 'not-the-nonce-latchkey-sent'), authorize))
    await expectRefused(t, logger, await b.request(callback), /unexpected ID Token "nonce" claim value/)
  })

  test("another provider's answer (a mix-up) is refused by its iss (RFC 9207)", async () => {
    const { t, logger } = await setUp([upstream, impostor])
    const b = browserFor(t, [upstream, impostor])
    const callback = await upToCallback(b, impostor, 'u-ann', (authorize) => new URL(authorize.pathname + authorize.search, impostor.issuer))
    expect(new URL(callback).searchParams.get('iss')).toBe(impostor.issuer)
    await expectRefused(t, logger, await b.request(callback), /unexpected "iss" \(issuer\) response parameter value/)
  })

  test("a mix-up with the iss parameter removed is refused too (the provider says it sends iss; RFC 9207 §2.4)", async () => {
    const { t, logger } = await setUp([upstream, impostor])
    const b = browserFor(t, [upstream, impostor])
    const callback = new URL(await upToCallback(b, impostor, 'u-ann', (authorize) => new URL(authorize.pathname + authorize.search, impostor.issuer)))
    callback.searchParams.delete('iss')
    await expectRefused(t, logger, await b.request(callback.href), /response parameter "iss" \(issuer\) missing/)
  })

  test("the provider's own error (the person said no) is a page, no session", async () => {
    const { t, logger } = await setUp([upstream])
    const b = browserFor(t, [upstream])
    const callback = new URL(await upToCallback(b, upstream))
    const denied = new URL(CALLBACK_OF('acme'))
    denied.search = new URLSearchParams({ error: 'access_denied', state: callback.searchParams.get('state')!, iss: upstream.issuer }).toString()
    await expectRefused(t, logger, await b.request(denied.href), /^provider answered access_denied$/, 403, 'Acme did not sign you in.')
  })

  test('an expired id_token is refused (judged by Latchkey’s clock)', async () => {
    const shortLived = await startUpstream({ redirectUris: [CALLBACK_OF('acme')], idTokenTtl: 60 })
    shortLived.accounts.set('u-ann', { email: 'ann@example.com', email_verified: true })
    try {
      const { t, logger } = await setUp([shortLived], shortLived)
      const b = browserFor(t, [shortLived])
      const callback = await upToCallback(b, shortLived)
      t.clock.advance(5 * 60_000)
      await expectRefused(t, logger, await b.request(callback), /"exp" \(expiration time\) claim value, expiration is past current timestamp/)
      expect(await identitiesOf(t)).toEqual([])
    } finally {
      await shortLived.close()
    }
  })
})

describe('the id_token signature', () => {
  test('an id_token altered on its way from the token endpoint is refused (openid-client checks it only when asked: enableNonRepudiationChecks)', async () => {
    // A man in the middle: forwards everything to the provider, and changes the subject in the
    // id_token the token endpoint answers (keeping the provider's signature).
    let target = ''
    let tampered = 0
    const proxy = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const url = new URL(request.url)
        // The Host header stays the proxy's: the provider names its endpoints on it.
        const answer = await fetch(target + url.pathname + url.search, { method: request.method, headers: request.headers, body: request.method === 'POST' ? await request.text() : undefined, redirect: 'manual' })
        if (url.pathname === '/token' && answer.status === 200) tampered++
        if (url.pathname !== '/token' || answer.status !== 200) return new Response(answer.body, { status: answer.status, headers: answer.headers })
        const body = (await answer.json()) as { id_token: string }
        const [header, payload, signature] = body.id_token.split('.') as [string, string, string]
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
        claims.sub = 'u-someone-else'
        body.id_token = [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.')
        return Response.json(body)
      },
    })
    const behind = await startUpstream({ redirectUris: [CALLBACK_OF('acme')], issuer: `http://127.0.0.1:${proxy.port}` })
    behind.accounts.set('u-ann', { email: 'ann@example.com', email_verified: true })
    target = `http://${behind.host}`
    try {
      const front = { ...behind, host: `127.0.0.1:${proxy.port}` }
      const { t, logger } = await setUp([front, behind], front)
      const b = browserFor(t, [front, behind])
      const callback = await upToCallback(b, behind)
      await expectRefused(t, logger, await b.request(callback), /JWT signature verification failed/)
      expect(tampered).toBe(1)
      expect(await identitiesOf(t)).toEqual([])
    } finally {
      await behind.close()
      proxy.stop(true)
    }
  })
})
