/**
 * Sessions per site (SPEC): /authz/start hands the browser a one-time code for one site origin;
 * the site's /.latchkey/callback trades it for a host-only cookie there. Codes and cookies are
 * stored as SHA-256 only (Lucia's guide); a site session ends with the sign-in session it came from.
 *
 * A code is bound to the browser that asked for it: /.latchkey/start gives that browser a state
 * cookie on the site's host, /authz/start stores the state's hash with the code, and the callback
 * spends the code only alongside that cookie. Without it anyone could sign a victim's browser into
 * their own account by sending them a callback link (login CSRF, RFC 6749 §10.12).
 */
import type { AppContext } from '../context'
import { cookieNamed } from '../lib/cookies'
import { constantTimeEqual, randomToken, sha256 } from '../lib/crypto'
import { parseSiteUrl } from './forwarded'

export const CODE_TTL_MS = 60_000
/** How long a sign-in begun at a site may take before the state cookie lapses (the chain then simply starts again). */
export const STATE_TTL_SECONDS = 3600
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

type Proto = 'http' | 'https'

/** The site's cookie: `__Host-` under https (Secure, Path=/, no Domain: only that host ever sees it). */
export const siteCookieName = (proto: Proto) => (proto === 'https' ? '__Host-lk_site' : 'lk_site')
export const stateCookieName = (proto: Proto) => (proto === 'https' ? '__Host-lk_state' : 'lk_state')

function hostCookie(name: string, proto: Proto, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${proto === 'https' ? '; Secure' : ''}`
}

export const siteCookie = (proto: Proto, value: string, maxAgeSeconds: number) => hostCookie(siteCookieName(proto), proto, value, maxAgeSeconds)
export const stateCookie = (proto: Proto, value: string, maxAgeSeconds = STATE_TTL_SECONDS) => hostCookie(stateCookieName(proto), proto, value, maxAgeSeconds)

function tokenCookie(headers: Headers, name: string): string | undefined {
  const value = cookieNamed(headers.get('cookie'), name)
  return value !== undefined && TOKEN_SHAPE.test(value) ? value : undefined
}

/** The site cookie a request carries, when it has the shape of one (anything else is no cookie). */
export const siteTokenOf = (headers: Headers, proto: Proto) => tokenCookie(headers, siteCookieName(proto))
export const stateOf = (headers: Headers, proto: Proto) => tokenCookie(headers, stateCookieName(proto))
export const isState = (value: string | null): value is string => value !== null && TOKEN_SHAPE.test(value)

/**
 * A site session's stored hash: of its scheme and cookie value, so a session made over http (its
 * cookie readable on the wire) is no session at all when presented as `__Host-lk_site` over https.
 */
export const siteSessionHash = (proto: Proto, token: string) => sha256(`${proto} ${token}`)

/** A one-time code for `returnTo`'s host, from the browser's sign-in session (its raw cookie value), for the browser holding `state`. */
export async function issueSiteCode(ctx: AppContext, sessionToken: string, host: string, returnTo: string, state: string): Promise<string> {
  const code = randomToken()
  await ctx.store.sites.insertSiteCode({ codeHash: sha256(code), sessionHash: sha256(sessionToken), host, returnTo, stateHash: sha256(state), expiresAt: ctx.clock.now() + CODE_TTL_MS })
  return code
}

/**
 * Spends a code presented at `origin` (the callback's own scheme, host and port) by a browser
 * holding `state` (its state cookie): the new site session's cookie value, its life and where to
 * return; undefined when refused — and the code is spent either way.
 */
export async function exchangeSiteCode(ctx: AppContext, code: string, origin: string, state: string | undefined): Promise<{ token: string; returnTo: string; maxAgeSeconds: number } | undefined> {
  const site = parseSiteUrl(origin)
  if (!TOKEN_SHAPE.test(code) || !site) return undefined
  const token = randomToken()
  const now = ctx.clock.now()
  const stateHash = state === undefined ? undefined : sha256(state)
  const accept = (c: { host: string; returnTo: string; stateHash: string }) =>
    c.host === site.host && parseSiteUrl(c.returnTo)?.origin === site.origin && stateHash !== undefined && constantTimeEqual(stateHash, c.stateHash)
  const made = await ctx.store.sites.exchangeSiteCode(sha256(code), accept, { idHash: siteSessionHash(site.proto, token), expiresAt: now + ctx.config.sessionTtl * 1000 }, now)
  return made && { token, returnTo: made.returnTo, maxAgeSeconds: Math.max(0, Math.floor((made.expiresAt - now) / 1000)) }
}

/** /.latchkey/logout: the sign-in session behind the cookie ends, and with it every site session. */
export function signOutSite(ctx: AppContext, proto: Proto, token: string, host: string): Promise<boolean> {
  return ctx.store.sites.endSignInOf(siteSessionHash(proto, token), host)
}
