/**
 * One forward-auth check, in named steps: the caller is a trusted proxy → the forwarded request
 * is well formed → its host names a site → who is asking (a bearer token for the site, or the
 * site's cookie) → the decision (decide.ts) → the answer (answers.ts).
 */
import type { AppContext } from '../context'
import type { SiteRecord, UserRecord } from '../db/store'
import { AccessDenied } from '../lib/errors'
import { addressIn, peerAddressOf, resolveClientAddress } from '../web/client-address'
import { siteLookups } from './cache'
import { decide, type Decision, type Identity } from './decide'
import type { ForwardedRequest } from './forwarded'
import { siteSessionHash, siteTokenOf } from './site-sessions'

/** Who the decision was about, for the Remote-* headers. */
export interface Caller {
  identity: Identity
  user?: UserRecord
  groups?: readonly string[]
  /** A machine's token (client_credentials): its client. */
  clientId?: string
  /** Who this is, as one object shared by every check of them while nothing about them changed (a cached site session's identity): the answer's headers are kept with it. */
  shared?: object
}

export type CheckResult = { kind: 'unknown-site' } | { kind: 'unnormalisable' } | { kind: 'decided'; site: SiteRecord; decision: Decision; caller: Caller }

/** SPEC: only the proxies in TRUSTED_PROXIES may ask (anyone else could forge X-Forwarded-*). */
export function requireTrustedProxy(ctx: AppContext, request: Request): void {
  if (!addressIn(peerAddressOf(request), ctx.config.trustedProxies)) throw new AccessDenied('the caller is not in TRUSTED_PROXIES')
}

/** The site of a host: exact before the nearest wildcard (a cached one as it is, no promise). */
export function findSite(ctx: AppContext, host: string): SiteRecord | undefined | Promise<SiteRecord | undefined> {
  return siteLookups(ctx.store).site(host)
}

export async function check(ctx: AppContext, request: Request, forwarded: ForwardedRequest): Promise<CheckResult> {
  const cached = findSite(ctx, forwarded.host)
  const site = cached instanceof Promise ? await cached : cached
  if (!site) return { kind: 'unknown-site' }
  if (!forwarded.target) return { kind: 'unnormalisable' }
  const caller = await whoIsAsking(ctx, request.headers, forwarded)
  // The client address only matters to rules that name networks.
  const address = site.rules.some((r) => r.networks.length > 0) ? resolveClientAddress(peerAddressOf(request), request.headers.get('x-forwarded-for'), ctx.config.trustedProxies) : ''
  const decision = decide(site, { method: forwarded.method, path: forwarded.target.path, address }, caller.identity)
  return { kind: 'decided', site, decision, caller }
}

const NOBODY: Caller = { identity: undefined }

/**
 * A Latchkey access token issued for this site (its resource URI is the site's origin), else the
 * site's own cookie at this very host; else nobody. A token for anything else proves nothing here.
 */
async function whoIsAsking(ctx: AppContext, headers: Headers, forwarded: ForwardedRequest): Promise<Caller> {
  const authorization = headers.get('authorization')
  if (authorization !== null && authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ') {
    const grant = await ctx.tokens.validate(authorization.slice(7).trim())
    if (grant && grant.resource === forwarded.origin) {
      // A machine (client_credentials: no user) is its client: Remote-User client:<id>, and rules may name it.
      if (grant.user === null) return { identity: { kind: 'client', clientId: grant.clientId }, clientId: grant.clientId }
      const groups = await ctx.store.groups.groupsOf(grant.user.id)
      return { identity: { kind: 'user', groups, twoFactor: false }, user: grant.user, groups }
    }
  }
  const token = siteTokenOf(headers, forwarded.proto)
  if (token === undefined) return NOBODY
  const now = ctx.clock.now()
  // A site session lives while its sign-in session does — SESSION_IDLE_TTL included — and a check is that session's activity.
  const lookup = siteLookups(ctx.store).session(siteSessionHash(forwarded.proto, token), forwarded.host, now, now - ctx.config.sessionIdleTtl * 1000)
  const session = lookup instanceof Promise ? await lookup : lookup
  if (!session) return NOBODY
  // Noted to be written: the cached entry knows it too (it is not idle here while it is in use here).
  if (ctx.sessionActivity.touchHash(session.sessionHash, session.lastActiveAt, now)) session.lastActiveAt = now
  const { user, groups } = session.identity
  return { identity: { kind: 'user', groups, twoFactor: session.twoFactor }, user, groups, shared: session.identity }
}
