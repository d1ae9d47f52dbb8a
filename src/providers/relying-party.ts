/**
 * Latchkey as a relying party of an upstream provider (SPEC "Sign in with another account"), on
 * openid-client v6. Every request goes through the metadata fetcher (src/lib/safe-fetch.ts: https,
 * public addresses unless CLIENT_ID_METADATA_ALLOW_HOSTS, no redirects, bounded size and time).
 * openid-client checks `state`, `iss` (RFC 9207 and the id_token's, against the discovered issuer,
 * so another provider's answer is refused: a mix-up), PKCE, `aud`, `azp`, `nonce` and expiry; it
 * does NOT check the signature of an id_token that came from the token endpoint unless asked —
 * `enableNonRepudiationChecks` asks, against the provider's JWKS.
 */
import * as oidc from 'openid-client'
import type { AppContext } from '../context'
import type { ProviderRecord } from '../db/store'
import type { Clock } from '../lib/clock'
import { FetchRefused, safeFetch, type SafeFetchPolicy } from '../lib/safe-fetch'

/** Why an answer from a provider was refused: for the operator's log (never secret), never shown as is. */
export class ProviderRefused extends Error {}

/** What Latchkey keeps of a provider's answer: its tokens are used here and dropped. */
export interface UpstreamAccount {
  subject: string
  email: string | null
  emailVerified: boolean
  name: string | null
  /** Google's hosted domain (the Workspace the account belongs to). */
  hd: string | null
  /** The id_token's amr names mfa (RFC 8176). */
  mfa: boolean
}

export interface Checks {
  state: string
  nonce: string
  verifier: string
}

const DISCOVERY_TTL_MS = 10 * 60_000

/**
 * openid-client's fetch, through the metadata fetcher; the answer keeps its status and content
 * type. `github`: GitHub answers a refused code with 200 and an `error` body, where RFC 6749 §5.2
 * says 400 — it is made a 400, so the refusal is read as the OAuth error it is.
 */
function fetchThrough(policy: SafeFetchPolicy, github = false): oidc.CustomFetch {
  return async (url, options) => {
    const headers = Object.fromEntries(Object.entries(options.headers).filter(([name]) => !['content-type', 'content-length'].includes(name.toLowerCase())))
    const type = Object.entries(options.headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? 'application/x-www-form-urlencoded'
    const post = options.method === 'POST' ? { type, body: String(options.body ?? '') } : undefined
    try {
      const got = await safeFetch(new URL(url), policy, post, { headers, anyStatus: true })
      const status = github && post && got.status === 200 && /"error"\s*:/.test(got.body) && !/"access_token"\s*:/.test(got.body) ? 400 : got.status
      return new Response(got.body, { status, headers: got.contentType ? { 'content-type': got.contentType } : {} })
    } catch (error) {
      if (error instanceof FetchRefused) throw new ProviderRefused(`${new URL(url).origin}${new URL(url).pathname} ${error.message}`)
      throw error
    }
  }
}

export class RelyingParty {
  private readonly policy: SafeFetchPolicy
  /** Discovered server metadata per provider (bounded by the providers there are), kept 10 minutes. */
  private readonly discovered = new Map<string, { updatedAt: number; at: number; metadata: oidc.ServerMetadata }>()

  constructor(
    private readonly deps: { clock: Clock; allowHosts: readonly string[]; ca?: string },
  ) {
    this.policy = { allowHosts: deps.allowHosts, ...(deps.ca ? { ca: deps.ca } : {}) }
  }

  private insecure(url: string): boolean {
    return new URL(url).protocol === 'http:'
  }

  /** The provider's server metadata: its discovery document, or GitHub's fixed endpoints. */
  private async metadata(p: ProviderRecord): Promise<oidc.ServerMetadata> {
    if (p.kind === 'github') return { issuer: p.issuer, authorization_endpoint: `${p.issuer}/login/oauth/authorize`, token_endpoint: `${p.issuer}/login/oauth/access_token` }
    const now = this.deps.clock.now()
    const known = this.discovered.get(p.id)
    if (known && known.updatedAt === p.updatedAt && now - known.at < DISCOVERY_TTL_MS) return known.metadata
    this.discovered.delete(p.id)
    let found: oidc.Configuration
    try {
      found = await oidc.discovery(new URL(p.issuer), p.clientId, undefined, oidc.None(), {
        [oidc.customFetch]: fetchThrough(this.policy),
        execute: this.insecure(p.issuer) ? [oidc.allowInsecureRequests] : [],
      })
    } catch (error) {
      // openid-client wraps what the fetcher refused ("something went wrong"): its reason is the cause.
      const cause = (error as { cause?: unknown }).cause
      if (cause instanceof ProviderRefused) throw cause
      throw error instanceof ProviderRefused ? error : new ProviderRefused(`discovery of ${p.issuer} failed: ${describe(error)}`)
    }
    const metadata = found.serverMetadata()
    this.discovered.set(p.id, { updatedAt: p.updatedAt, at: now, metadata })
    return metadata
  }

  /** A configuration for one sign-in: Latchkey's clock is the one tokens are judged by. */
  private async configuration(p: ProviderRecord, secret: string): Promise<oidc.Configuration> {
    const metadata = await this.metadata(p)
    const methods = metadata.token_endpoint_auth_methods_supported
    // RFC 6749 §2.3.1: servers support HTTP Basic; GitHub's documented form is the body.
    const auth = p.kind === 'github' || (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) ? oidc.ClientSecretPost(secret) : oidc.ClientSecretBasic(secret)
    const skew = Math.round((this.deps.clock.now() - Date.now()) / 1000)
    const config = new oidc.Configuration(metadata, p.clientId, { [oidc.clockSkew]: skew }, auth)
    config[oidc.customFetch] = fetchThrough(this.policy, p.kind === 'github')
    if (this.insecure(p.issuer)) oidc.allowInsecureRequests(config)
    if (p.kind !== 'github') oidc.enableNonRepudiationChecks(config)
    return config
  }

  /**
   * The origin of the provider's authorization endpoint, for /account's CSP form-action (Connect
   * is a form whose answer redirects there): from the discovery document when it is cached, else
   * the issuer's (where providers put it; no fetch while a page renders).
   */
  authorizationOrigin(p: ProviderRecord): string {
    const known = this.discovered.get(p.id)?.metadata.authorization_endpoint
    return new URL(known ?? p.issuer).origin
  }

  /** Where the browser is sent: the provider's authorization endpoint with PKCE (S256), state and (OpenID Connect) nonce. */
  async authorizationUrl(p: ProviderRecord, secret: string, redirectUri: string, checks: Checks): Promise<URL> {
    const config = await this.configuration(p, secret)
    const params: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: p.scope,
      state: checks.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.verifier),
      code_challenge_method: 'S256',
    }
    if (p.kind !== 'github') params.nonce = checks.nonce
    return oidc.buildAuthorizationUrl(config, params)
  }

  /** The callback: the code exchanged and every check made; the account as the provider describes it. */
  async finish(p: ProviderRecord, secret: string, callback: URL, checks: Checks): Promise<UpstreamAccount> {
    const config = await this.configuration(p, secret)
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>
    try {
      tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: checks.verifier,
        expectedState: checks.state,
        ...(p.kind === 'github' ? {} : { expectedNonce: checks.nonce, idTokenExpected: true }),
      })
    } catch (error) {
      throw error instanceof ProviderRefused ? error : new ProviderRefused(describe(error))
    }
    if (p.kind === 'github') return this.gitHubAccount(p, tokens.access_token)
    const claims = tokens.claims()!
    let email = typeof claims.email === 'string' ? claims.email : null
    let verified = claims.email_verified === true
    let name = typeof claims.name === 'string' ? claims.name : null
    // Some providers name the address only at userinfo (OpenID Connect Core §5.3), checked for the same subject.
    if (email === null && p.scope.split(' ').includes('email') && config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
        email = typeof info.email === 'string' ? info.email : null
        verified = info.email_verified === true
        name ??= typeof info.name === 'string' ? info.name : null
      } catch (error) {
        throw error instanceof ProviderRefused ? error : new ProviderRefused(`userinfo: ${describe(error)}`)
      }
    }
    const amr = Array.isArray(claims.amr) ? claims.amr : []
    // OpenID Connect Core §2: at most 255 ASCII characters (it is half of a primary key).
    if (!/^[\x21-\x7e]{1,255}$/.test(claims.sub)) throw new ProviderRefused('the id_token sub is not 1–255 printable ASCII characters')
    return { subject: claims.sub, email, emailVerified: verified, name, hd: typeof claims.hd === 'string' ? claims.hd : null, mfa: amr.includes('mfa') }
  }

  /**
   * GitHub (an OAuth app, no id_token): GET /user for the subject (its numeric id, which never
   * changes, unlike the login) and GET /user/emails for the verified primary address only.
   */
  private async gitHubAccount(p: ProviderRecord, accessToken: string): Promise<UpstreamAccount> {
    const api = async (path: string) => {
      const got = await safeFetch(new URL(`${p.apiUrl}${path}`), this.policy, undefined, {
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
      }).catch((error: Error) => {
        throw new ProviderRefused(`GitHub API ${path}: ${error.message}`)
      })
      try {
        return JSON.parse(got.body) as unknown
      } catch {
        throw new ProviderRefused(`GitHub API ${path}: not JSON`)
      }
    }
    const user = (await api('/user')) as { id?: unknown; name?: unknown; login?: unknown }
    if (typeof user.id !== 'number' || !Number.isSafeInteger(user.id)) throw new ProviderRefused('GitHub API /user: no numeric id')
    const emails = await api('/user/emails')
    const primary = Array.isArray(emails) ? (emails as Array<{ email?: unknown; primary?: unknown; verified?: unknown }>).find((e) => e.primary === true && e.verified === true && typeof e.email === 'string') : undefined
    const name = typeof user.name === 'string' && user.name ? user.name : typeof user.login === 'string' ? user.login : null
    return { subject: String(user.id), email: (primary?.email as string | undefined) ?? null, emailVerified: primary !== undefined, name, hd: null, mfa: false }
  }
}

/** openid-client's error, as a line for the log: its code and what oauth4webapi found (a claim's name, never a token). */
function describe(error: unknown): string {
  const e = error as { code?: string; message?: string; error?: string; cause?: { message?: unknown } }
  const found = typeof e.cause?.message === 'string' ? e.cause.message : undefined
  return [e.code, e.error, e.message, found].filter(Boolean).join(': ').slice(0, 300)
}

const relyingParties = new WeakMap<AppContext, RelyingParty>()
/** One relying party per app (its discovery cache), shared by the routes and /account. */
export function relyingPartyOf(ctx: AppContext): RelyingParty {
  let rp = relyingParties.get(ctx)
  if (!rp) relyingParties.set(ctx, (rp = new RelyingParty({ clock: ctx.clock, allowHosts: ctx.config.clientIdMetadataAllowHosts })))
  return rp
}
