import type { AppContext } from '../context'
import { cookie } from '../lib/cookies'
import { PageError } from '../lib/errors'
import { seeOther } from '../views/page'
import { PENDING_TTL_MS, SESSION_TTL_MS, cookieNames, createSession } from './sessions'
import { sessionCookieOf } from './web'

/** Where a second factor is asked for, returning to `returnTo` afterwards. */
export function twoStepUrl(returnTo: string | undefined): string {
  return returnTo ? `/login/two-step?return_to=${encodeURIComponent(returnTo)}` : '/login/two-step'
}

/** Where a sign-in lands an unverified account under EMAIL_VERIFICATION=required, keeping where it was going. */
export function checkEmailUrl(returnTo: string | undefined): string {
  return returnTo ? `/check-email?return_to=${encodeURIComponent(returnTo)}` : '/check-email'
}

/**
 * Ends a sign-in: a new session with how the user signed in (RFC 8176 `amr`), replacing the
 * browser's previous one whoever it belonged to (SPEC), and back to where they were going.
 * `pending`: the password was right and a second factor is due — the browser goes to
 * /login/two-step, signed in to nothing until it is given. Under EMAIL_VERIFICATION=required an
 * unverified account lands on "Check your email" (SPEC), which continues to `returnTo` once verified.
 */
export async function startSession(
  ctx: AppContext,
  request: Request,
  userId: string,
  returnTo: string | undefined,
  how: { amr: readonly string[]; pending?: boolean },
): Promise<Response> {
  const secure = ctx.config.secureCookies
  const token = await createSession(ctx.store, userId, ctx.clock.now(), how, sessionCookieOf(ctx, request))
  if (token === undefined) throw new PageError(403, 'Account disabled', 'This account is disabled. Ask your administrator.')
  const maxAge = (how.pending ? PENDING_TTL_MS : SESSION_TTL_MS) / 1000
  const sessionCookie = cookie(cookieNames(secure).session, token, { secure, maxAgeSeconds: maxAge })
  if (how.pending) return seeOther(twoStepUrl(returnTo), [sessionCookie])
  const unverified = ctx.config.emailVerification === 'required' && !(await ctx.store.users.findUser(userId))?.emailVerified
  return seeOther(unverified ? checkEmailUrl(returnTo) : (returnTo ?? '/account'), [sessionCookie])
}

/** The second factors a user could give now: TOTP, and passkeys (when this server offers them). */
export async function secondFactorsOf(ctx: AppContext, userId: string): Promise<{ totp: boolean; passkeys: boolean }> {
  const [totp, passkeys] = await Promise.all([hasTotp(ctx, userId), ctx.config.passkeys ? ctx.store.mfa.listPasskeys(userId) : []])
  return { totp, passkeys: passkeys.length > 0 }
}

/** Whether the user has TOTP turned on (a confirmed secret). */
export async function hasTotp(ctx: AppContext, userId: string): Promise<boolean> {
  return (await ctx.store.mfa.findTotp(userId))?.confirmedAt != null
}
