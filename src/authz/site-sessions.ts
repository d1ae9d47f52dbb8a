/**
 * Sessions per site (SPEC): /authz/start hands the browser a one-time code for one host; the
 * site's /.latchkey/callback trades it for a host-only cookie there. Codes and cookies are stored
 * as SHA-256 only (Lucia's guide); a site session ends with the sign-in session it came from.
 */
import type { AppContext } from '../context'
import { parseCookies } from '../lib/cookies'
import { randomToken, sha256 } from '../lib/crypto'

export const CODE_TTL_MS = 60_000
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

/** The site's cookie: `__Host-` under https (Secure, Path=/, no Domain: only that host ever sees it). */
export const siteCookieName = (proto: 'http' | 'https') => (proto === 'https' ? '__Host-lk_site' : 'lk_site')

export function siteCookie(proto: 'http' | 'https', value: string, maxAgeSeconds: number): string {
  return `${siteCookieName(proto)}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${proto === 'https' ? '; Secure' : ''}`
}

/** The site cookie a request carries, when it has the shape of one (anything else is no cookie). */
export function siteTokenOf(headers: Headers, proto: 'http' | 'https'): string | undefined {
  const value = parseCookies(headers.get('cookie'))[siteCookieName(proto)]
  return value !== undefined && TOKEN_SHAPE.test(value) ? value : undefined
}

/** A one-time code for `host`, from the browser's sign-in session (its raw cookie value). */
export async function issueSiteCode(ctx: AppContext, sessionToken: string, host: string, returnTo: string): Promise<string> {
  const code = randomToken()
  await ctx.store.sites.insertSiteCode({ codeHash: sha256(code), sessionHash: sha256(sessionToken), host, returnTo, expiresAt: ctx.clock.now() + CODE_TTL_MS })
  return code
}

/** Spends a code at `host`: the new site session's cookie value, its life and where to return; undefined when refused. */
export async function exchangeSiteCode(ctx: AppContext, code: string, host: string): Promise<{ token: string; returnTo: string; maxAgeSeconds: number } | undefined> {
  if (!TOKEN_SHAPE.test(code)) return undefined
  const token = randomToken()
  const now = ctx.clock.now()
  const made = await ctx.store.sites.exchangeSiteCode(sha256(code), host, { idHash: sha256(token), expiresAt: now + ctx.config.sessionTtl * 1000 }, now)
  return made && { token, returnTo: made.returnTo, maxAgeSeconds: Math.max(0, Math.floor((made.expiresAt - now) / 1000)) }
}

/** /.latchkey/logout: the sign-in session behind the cookie ends, and with it every site session. */
export function signOutSite(ctx: AppContext, token: string, host: string): Promise<boolean> {
  return ctx.store.sites.endSignInOf(sha256(token), host)
}
