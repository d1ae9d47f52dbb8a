/**
 * Sign in with another account (SPEC): "Continue with NAME" starts a sign-in at the provider
 * (GET /login/provider/ID), the provider sends the browser back to ISSUER/login/provider/ID/callback,
 * and /account connects and disconnects identities. A sign-in in flight is a row found by the
 * SHA-256 of its `state`, used once (whichever instance sees it first), and good only in the browser
 * holding its cookie: the PKCE verifier is derived from that cookie and never stored.
 */
import { Elysia, t } from 'elysia'
import { accountPage } from '../accounts/security'
import { forbidden } from '../accounts/sign-in'
import { hasTotp, startSession } from '../accounts/signed-in'
import { csrfAccepted, readSession, safeReturnTo } from '../accounts/web'
import type { AppContext } from '../context'
import type { ProviderRecord } from '../db/store'
import { clearCookie, cookie, parseCookies } from '../lib/cookies'
import { constantTimeEqual, hmacSha256, randomToken, sha256 } from '../lib/crypto'
import { errorPageSaying, notFoundPage } from '../views/error-page'
import { t as msg } from '../i18n'
import { speechOf } from '../i18n/request'
import type { PageErrorKey } from '../i18n/types'
import { seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { clientAddressOf, rateLimitKey } from '../web/client-address'
import { decideWindowAttempt } from '../accounts/throttle'
import { settle } from './linking'
import { ProviderRefused, relyingPartyOf } from './relying-party'
import { callbackUrl, unsealSecret } from './service'

/** How long a sign-in may stay at the provider. */
const FLOW_TTL_MS = 10 * 60_000
/**
 * Sign-ins one client address may start a minute: each writes a state row (kept 10 minutes) and
 * may fetch a discovery document, so a loop of starts is bounded (per address, on every instance).
 */
const STARTS_PER_MINUTE = 30
/** SPEC: connecting needs a sign-in of the last 15 minutes (the password or a passkey again). */
const FRESH_SIGN_IN_MS = 15 * 60_000

const ProviderForm = t.Object({ csrf_token: t.Optional(t.String()) })
const StartQuery = t.Object({ return_to: t.Optional(t.String()) })

/** The PKCE verifier of a sign-in (RFC 7636 §4.1: 43 characters of base64url), from the browser's cookie and the state. */
const verifierOf = (browser: string, state: string) => hmacSha256(browser, `pkce:${state}`)

export function providerRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  const flowCookie = `${secure ? '__Host-' : ''}lk_provider`
  const rp = relyingPartyOf(ctx)

  const unreachable = (request: Request, p: ProviderRecord, returnTo: string | null) => errorPageSaying(502, 'error.providerUnreachable', speechOf(ctx.config, request, { returnTo: returnTo ?? undefined }), { name: p.name })

  /** Sends the browser to the provider: a state row, the browser's cookie, PKCE and nonce. */
  async function start(request: Request, p: ProviderRecord, returnTo: string | null, userId: string | null): Promise<Response> {
    const address = clientAddressOf(request, ctx.config.trustedProxies)
    const wait = await ctx.store.throttle.updateThrottle(`prov:addr:${rateLimitKey(address)}`, (row) => decideWindowAttempt(row, ctx.clock.now(), STARTS_PER_MINUTE, 60_000))
    if (wait > 0) {
      ctx.log.warn('provider sign-in throttled', { provider: p.id, client: address, retry_after: wait })
      return errorPageSaying(429, 'error.providerThrottled', speechOf(ctx.config, request, { returnTo: returnTo ?? undefined }), { count: wait }, { 'retry-after': String(wait) })
    }
    const secret = await unsealSecret(ctx.sealKey, p)
    if (secret === undefined) {
      ctx.log.error('provider secret does not open', { provider: p.id })
      return unreachable(request, p, returnTo)
    }
    const browser = randomToken()
    const state = randomToken()
    const nonce = randomToken()
    let url: URL
    try {
      url = await rp.authorizationUrl(p, secret, callbackUrl(ctx.config.issuer, p.id), { state, nonce, verifier: verifierOf(browser, state) })
    } catch (error) {
      if (!(error instanceof ProviderRefused)) throw error
      ctx.log.warn('provider unreachable', { provider: p.id, reason: error.message })
      return unreachable(request, p, returnTo)
    }
    const now = ctx.clock.now()
    await ctx.store.providers.insertState({ stateHash: sha256(state), providerId: p.id, browserHash: sha256(browser), nonce, returnTo, userId, expiresAt: now + FLOW_TTL_MS })
    return seeOther(url.href, [cookie(flowCookie, browser, { secure, maxAgeSeconds: FLOW_TTL_MS / 1000 })])
  }

  /** A refused callback (SPEC): a page, no session, a warn line and a sign_in.failed event naming the reason. */
  async function refuse(request: Request, providerId: string, reason: string, page: { status: number; key: PageErrorKey; params?: Readonly<Record<string, string>> }, userId?: string) {
    providerId = providerId.slice(0, 64)
    ctx.log.warn('sign-in failed', { method: 'provider', provider: providerId, reason })
    ctx.metrics.signIn('provider', 'failure')
    await ctx.audit.record('sign_in.failed', { userId, request, detail: { method: 'provider', provider: providerId, reason: reason.slice(0, 200) } })
    return errorPageSaying(page.status, page.key, speechOf(ctx.config, request), page.params, { 'set-cookie': clearCookie(flowCookie, secure) })
  }

  const FAILED = { status: 400, key: 'error.providerFailed' as const }

  async function callback(request: Request, id: string): Promise<Response> {
    const url = new URL(request.url)
    const state = url.searchParams.get('state')
    const pending = state ? await ctx.store.providers.takeState(sha256(state), ctx.clock.now()) : undefined
    if (!state || !pending || pending.providerId !== id) return refuse(request, id, 'state', FAILED)
    const browser = parseCookies(request.headers.get('cookie'))[flowCookie]
    if (!browser || !constantTimeEqual(sha256(browser), pending.browserHash)) return refuse(request, id, 'browser', FAILED)
    const p = await ctx.store.providers.findProvider(id)
    const secret = p && (await unsealSecret(ctx.sealKey, p))
    if (!p || secret === undefined) return refuse(request, id, 'provider', FAILED)
    if (url.searchParams.has('error')) {
      const cancelled = { status: 403, key: 'error.providerCancelled' as const, params: { name: p.name } }
      return refuse(request, id, `provider answered ${url.searchParams.get('error')!.slice(0, 50)}`, cancelled, pending.userId ?? undefined)
    }
    // Connecting: still signed in, in this browser, as the user who started it (and still when the link is made: settle).
    const session = pending.userId === null ? undefined : await readSession(ctx, request)
    if (pending.userId !== null && session?.user.id !== pending.userId) return refuse(request, id, 'session', FAILED, pending.userId)
    // openid-client reads the answer from the URL registered at the provider (ISSUER's), not the one a proxy forwarded.
    const answer = new URL(callbackUrl(ctx.config.issuer, id))
    answer.search = url.search
    let account
    try {
      account = await rp.finish(p, secret, answer, { state, nonce: pending.nonce, verifier: verifierOf(browser, state) })
    } catch (error) {
      if (!(error instanceof ProviderRefused)) throw error
      return refuse(request, id, error.message, FAILED, pending.userId ?? undefined)
    }
    const settled = await settle(ctx, p, account, session ? { userId: session.user.id, session: sha256(session.token) } : null)
    const done = clearCookie(flowCookie, secure)
    if (settled.kind === 'refused') return refuse(request, id, settled.reason, settled, pending.userId ?? undefined)
    if (settled.kind === 'connected') {
      await ctx.audit.record('identity.linked', { userId: settled.userId, request, detail: { provider: id, how: 'connect' } })
      return seeOther('/account#connected', [done])
    }
    if (settled.how !== 'identity') await ctx.audit.record(settled.how === 'created' ? 'user.created' : 'identity.linked', { userId: settled.userId, request, detail: { provider: id, how: settled.how } })
    // --trust-mfa: the provider's own second factor counts (its id_token's amr has mfa, RFC 8176).
    const amr = p.trustMfa && account.mfa ? ['fed', 'mfa'] : ['fed']
    const returnTo = safeReturnTo(pending.returnTo) ?? undefined
    ctx.metrics.signIn('provider', 'success')
    // A user who turned on TOTP gives a code after the provider too, unless the provider's second factor is trusted.
    if (amr.length === 1 && (await hasTotp(ctx, settled.userId))) {
      const pendingSession = await startSession(ctx, request, settled.userId, returnTo, { amr, pending: true })
      pendingSession.headers.append('set-cookie', done)
      return pendingSession
    }
    const signedIn = await startSession(ctx, request, settled.userId, returnTo, { amr, signUp: settled.how === 'created' })
    signedIn.headers.append('set-cookie', done)
    await ctx.audit.record('sign_in.succeeded', { userId: settled.userId, request, detail: { method: 'provider', provider: id } })
    return signedIn
  }

  return new Elysia({ name: 'providers' })
    .get(
      '/login/provider/:id',
      async function startSignIn({ params, query, request }) {
        const p = await ctx.store.providers.findProvider(params.id)
        if (!p) return notFoundPage()
        return start(request, p, safeReturnTo(query.return_to) ?? null, null)
      },
      { query: StartQuery },
    )
    .get('/login/provider/:id/callback', ({ params, request }) => callback(request, params.id))
    .post(
      '/account/providers/:id/connect',
      async function connect({ params, request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const p = await ctx.store.providers.findProvider(params.id)
        if (!p) return notFoundPage()
        if (ctx.clock.now() - session.authTime > FRESH_SIGN_IN_MS) return seeOther(`/login?reauth=1&return_to=${encodeURIComponent('/account')}`)
        return start(request, p, '/account', session.user.id)
      },
      { parse: parsePageForm, body: ProviderForm },
    )
    .post(
      '/account/providers/:id/disconnect',
      async function disconnect({ params, request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const outcome = await ctx.store.providers.unlinkIdentity(session.user.id, params.id)
        if (outcome === 'last') return accountPage(ctx, request, session, { status: 409, error: () => msg('provider.lastWay') })
        if (outcome === 'done') await ctx.audit.record('identity.unlinked', { userId: session.user.id, request, detail: { provider: params.id } })
        return seeOther('/account#connected')
      },
      { parse: parsePageForm, body: ProviderForm },
    )
}

