import type { AppContext } from '../context'
import { cookie, parseCookies } from '../lib/cookies'
import { randomToken } from '../lib/crypto'
import { PageError } from '../lib/errors'
import { newDeviceMessage, recipient } from '../mail/messages'
import { clientAddressOf } from '../web/client-address'
import { seeOther } from '../views/page'
import { PENDING_TTL_MS, cookieNames, createSession } from './sessions'
import { DEVICE_COOKIE_SECONDS } from './device-cookie'
import { describeUserAgent } from './user-agent'
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
  how: { amr: readonly string[]; pending?: boolean; signUp?: boolean },
): Promise<Response> {
  const secure = ctx.config.secureCookies
  const names = cookieNames(secure)
  const now = ctx.clock.now()
  const userAgent = request.headers.get('user-agent') ?? ''
  const address = clientAddressOf(request, ctx.config.trustedProxies)
  // A long-lived random cookie per browser, stored hashed: a sign-in from one the account has not seen is a "new sign-in" (SPEC).
  const existing = parseCookies(request.headers.get('cookie'))[names.device]
  const device = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken()
  const newDevice = !how.pending && !how.signUp && ctx.config.smtpUrl !== null && ctx.config.newDeviceEmail ? await newDeviceNotice(ctx, userId, now, address, userAgent) : undefined
  const ttlMs = ctx.config.sessionTtl * 1000
  const token = await createSession(ctx.store, userId, now, { ...how, ttlMs, userAgent, address, device, newDevice }, sessionCookieOf(ctx, request))
  if (token === undefined) throw new PageError(403, 'error.accountDisabled')
  const maxAge = how.pending ? PENDING_TTL_MS / 1000 : ctx.config.sessionTtl
  const cookies = [cookie(names.session, token, { secure, maxAgeSeconds: maxAge })]
  if (device !== existing) cookies.push(cookie(names.device, device, { secure, maxAgeSeconds: DEVICE_COOKIE_SECONDS }))
  if (how.pending) return seeOther(twoStepUrl(returnTo), cookies)
  const unverified = ctx.config.emailVerification === 'required' && !(await ctx.store.users.findUser(userId))?.emailVerified
  return seeOther(unverified ? checkEmailUrl(returnTo) : (returnTo ?? '/account'), cookies)
}

/** "New sign-in to your account" (SPEC "New device"): queued with the session only if the browser is new to the account. */
async function newDeviceNotice(ctx: AppContext, userId: string, now: number, address: string, userAgent: string) {
  const user = await ctx.store.users.findUser(userId)
  if (!user) return undefined
  return newDeviceMessage(recipient(ctx.config, user), { at: now, address, device: () => describeUserAgent(userAgent), reviewUrl: `${ctx.config.issuer}/account#sessions` })
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
