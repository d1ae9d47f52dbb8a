/** The provider tests' set-up: an app (SQLite or PostgreSQL), a real upstream provider registered as `acme`, and a browser. */
import { createProvider, type ProviderInput } from '../../src/providers/service'
import type { Logger } from '../../src/lib/log'
import { ORIGIN, PASSWORD, createTestApp, type TestApp } from '../helpers'
import { Browser } from './browser'
import { startUpstream, type Upstream } from './upstream'

export const CALLBACK_OF = (id: string) => `${ORIGIN}/login/provider/${id}/callback`

export async function upstreamFor(ids: string[] = ['acme']): Promise<Upstream> {
  const upstream = await startUpstream({ redirectUris: ids.map(CALLBACK_OF) })
  upstream.accounts.set('u-ann', { email: 'ann@example.com', email_verified: true, name: 'Ann Upstream' })
  upstream.accounts.set('u-unverified', { email: 'ann@example.com', email_verified: false, name: 'Not Ann' })
  upstream.accounts.set('u-new', { email: 'new@example.com', email_verified: true, name: 'New Person' })
  upstream.accounts.set('u-other', { email: 'zed@elsewhere.example', email_verified: true, name: 'Zed' })
  return upstream
}

export async function appWith(upstreams: Upstream[], env: Record<string, string> = {}, opts: { log?: Logger } = {}): Promise<TestApp> {
  const t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: upstreams.map((u) => u.host).join(','), LOGIN_ATTEMPTS_PER_MINUTE: '1000', ...env }, opts)
  // Tokens are judged by Latchkey's clock: start it at the provider's time.
  t.clock.advance(Date.now() - t.clock.now())
  return t
}

export function addProvider(t: TestApp, upstream: Upstream, input: Partial<ProviderInput> = {}) {
  return createProvider(
    t.store,
    t.ctx.sealKey,
    { id: 'acme', name: 'Acme', issuer: upstream.issuer, clientId: upstream.clientId, clientSecret: upstream.clientSecret, ...input },
    t.config.clientIdMetadataAllowHosts,
    t.clock.now(),
  )
}

export function browserFor(t: TestApp, upstreams: Upstream[]): Browser {
  return new Browser(t, () => upstreams.map((u) => u.host))
}

/** "Continue with Acme" as `account`: the whole round trip; the last answer and where it left to. */
export async function continueWith(b: Browser, upstream: Upstream, account: string, opts: { returnTo?: string; amr?: string[]; provider?: string } = {}) {
  upstream.next.account = account
  upstream.next.amr = opts.amr ?? ['pwd']
  const query = opts.returnTo ? `?return_to=${encodeURIComponent(opts.returnTo)}` : ''
  return b.go(`/login/provider/${opts.provider ?? 'acme'}${query}`)
}

/** Signs in with the password through /login, in this browser. */
export async function passwordSignIn(b: Browser, email = 'ann@example.com') {
  return b.submit('/login', '/login', { email, password: PASSWORD })
}

/** The one session's user and amr (the tests use one browser at a time). */
export async function sessionsOf(t: TestApp) {
  return (await t.rows('SELECT user_id, amr, pending FROM sessions ORDER BY created_at')).map((r) => ({ user: r.user_id, amr: r.amr, pending: Boolean(r.pending) }))
}

export async function identitiesOf(t: TestApp) {
  return (await t.rows('SELECT provider_id, subject, user_id, email FROM user_identities ORDER BY created_at, subject')).map((r) => ({ provider: r.provider_id, subject: r.subject, user: r.user_id, email: r.email }))
}

export async function failures(t: TestApp) {
  return (await t.rows("SELECT detail FROM audit_events WHERE kind = 'sign_in.failed' ORDER BY id")).map((r) => JSON.parse(r.detail as string) as Record<string, string>)
}

export const verifyEmail = (t: TestApp, email: string) => t.rows('UPDATE users SET email_verified = (1 = 1) WHERE email = ?', email)
