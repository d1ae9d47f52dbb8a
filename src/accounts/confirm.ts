import type { AppContext } from '../context'
import { verifyPassword } from '../lib/crypto'
import { PasskeyRefused, verifyPasskeyConfirmation } from './passkeys'
import type { Session } from './sessions'
import { emailHash } from './sign-in'
import { SignInLimits } from './throttle'
import { PASSWORD_MAX } from './users'
import { t as msg } from '../i18n'
import { sayError } from '../i18n/known-errors'

/** A refusal for the page to show, or undefined: the person proved it is them. */
export type Proof = undefined | { status: number; error: () => string }

/**
 * How recent a sign-in proves it is the person, for an account that has neither a password nor a
 * passkey — one that signs in with a connected account only: it has nothing else to confirm with,
 * and signing in again at its provider is what it can do. Five minutes, as a passkey's
 * confirmation challenge.
 */
export const FRESH_SIGN_IN_PROOF_MS = 5 * 60_000

/**
 * How an account confirms a sensitive step: its password (perhaps a passkey instead), its passkey
 * only, or — with neither — a sign-in of the last five minutes, `fresh` or not yet.
 */
export type ConfirmWay = { by: 'password' } | { by: 'passkey' } | { by: 'signIn'; fresh: boolean }

export async function confirmWayOf(ctx: AppContext, session: Session, hasPassword: boolean): Promise<ConfirmWay> {
  if (hasPassword) return { by: 'password' }
  if (ctx.config.passkeys !== null && (await ctx.store.mfa.listPasskeys(session.user.id)).length > 0) return { by: 'passkey' }
  return { by: 'signIn', fresh: signedInLately(ctx, session) }
}

/** The session's sign-in is of the last five minutes. */
export function signedInLately(ctx: AppContext, session: Session): boolean {
  return ctx.clock.now() - session.authTime <= FRESH_SIGN_IN_PROOF_MS
}

/**
 * For a page that asks for a confirmation: an account with a connected account only (no password,
 * no passkey) confirms with a sign-in of the last five minutes — `fresh`, the page says so; else it
 * links to signing in again, back to `returnTo`. Undefined for an account with a password or a
 * passkey. The page passes what it has read already, so nothing is read again.
 */
export type SignInProof = { fresh: boolean; returnTo: string }

export function signInProofOf(ctx: AppContext, session: Session, ways: { password: boolean; passkey: boolean }, returnTo: string): SignInProof | undefined {
  return ways.password || ways.passkey ? undefined : { fresh: signedInLately(ctx, session), returnTo }
}

/**
 * What "Change password", "Set password" and "Delete my account" ask first (SPEC "Your account
 * and your sessions"): the current password, guessed under the sign-in budgets (SPEC "Sign-in
 * throttling"), or a fresh passkey of this account — an assertion over a challenge this browser
 * asked for in the last five minutes, used once (passkeys.ts verifyPasskeyConfirmation). An
 * account without a password has only its passkeys; one with neither (a connected account only)
 * has a sign-in of the last five minutes (confirmWayOf). A passkey is not a guessable secret: a
 * refused one is logged and audited, not counted.
 */
export function accountProof(ctx: AppContext) {
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)

  return async function prove(
    request: Request,
    session: Session,
    given: { password?: string; credential?: string },
    words: { wrongPassword: () => string; nothing: () => string },
  ): Promise<Proof> {
    if (given.credential) {
      try {
        await verifyPasskeyConfirmation(ctx, session.user, session.token, given.credential)
        return undefined
      } catch (error) {
        if (!(error instanceof PasskeyRefused)) throw error
        ctx.log.warn('passkey confirmation failed', { user: session.user.id, reason: error.message })
        await ctx.audit.record('sign_in.failed', { userId: session.user.id, request, detail: { method: 'passkey', reason: 'confirmation' } })
        // In the reader's language (the passkey module words its refusals in English for every caller).
        return { status: 401, error: () => `${sayError(error)} ${words.nothing()}` }
      }
    }
    const account = await ctx.store.users.findUserByEmail(session.user.email)
    if (!account?.passwordHash) {
      const way = await confirmWayOf(ctx, session, false)
      if (way.by === 'signIn' && way.fresh) return undefined
      return { status: 401, error: () => `${msg(way.by === 'signIn' ? 'confirm.signInFirst' : 'confirm.passkeyFirst')} ${words.nothing()}` }
    }
    // Counted before it is checked, so parallel guesses get no more checks than sequential ones.
    const key = emailHash(session.user.email)
    const throttled = await limits.takeAttempt(ctx, request, key, 'password check throttled')
    if (throttled) return { status: 429, error: () => msg('account.tooMany', { count: throttled.wait }) }
    const password = given.password ?? ''
    if (password.length > PASSWORD_MAX || !(await verifyPassword(password, account.passwordHash))) {
      ctx.log.warn('password check failed', { email_hash: key })
      await ctx.audit.record('sign_in.failed', { userId: session.user.id, request, detail: { method: 'password', reason: 'credentials' } })
      return { status: 401, error: words.wrongPassword }
    }
    await limits.succeeded(key)
    return undefined
  }
}
