/** The provider tests' set-up: an app (SQLite or PostgreSQL), a real upstream provider registered as `acme`, and a browser. */
import { createProvider, type ProviderInput } from '../../src/providers/service'
import { ORIGIN, createTestApp, type TestApp } from '../helpers'
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

export async function appWith(upstreams: Upstream[], env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: upstreams.map((u) => u.host).join(','), LOGIN_ATTEMPTS_PER_MINUTE: '1000', ...env })
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
