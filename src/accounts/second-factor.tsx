/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { json } from '../lib/http'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { PasskeyForm, TwoStepForm, TwoStepQuery } from './model'
import { TwoStepPage } from './mfa-pages'
import { PasskeyRefused, passkeyAmr, signInOptions, verifyPasskeySignIn } from './passkeys'
import { hasTwoFactors, type Session } from './sessions'
import { emailHash, forbidden, loginPage } from './sign-in'
import { hasTotp, secondFactorsOf, startSession } from './signed-in'
import { SignInLimits } from './throttle'
import { acceptRecoveryCode, acceptTotpCode } from './totp'
import { t } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'
import { formBinding, formCsrf, loginUrl, readAnySession, returningApp, safeReturnTo } from './web'

const NO_STORE = { 'cache-control': 'no-store' }

/** RFC 8176: what a session's factors become once a TOTP (or recovery) code was given as well. */
const withOtp = (amr: readonly string[]) => [...new Set([...amr.filter((m) => m !== 'mfa'), 'otp', 'mfa'])]

/**
 * The second half of signing in: a passkey (on /login, or instead of a code), and
 * /login/two-step — a TOTP or recovery code after the password, or to step up a one-factor
 * session for an app that requires two (`--require-mfa`).
 */
export function secondFactorRoutes(ctx: AppContext) {
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)

  async function twoStepPage(request: Request, session: Session, returnTo: string | undefined, recovery: boolean, again?: { status: number; error: () => string; headers?: Record<string, string> }) {
    const { totp, passkeys } = await secondFactorsOf(ctx, session.user.id)
    const app = await returningApp(ctx, returnTo)
    const csrf = formCsrf(ctx, request, session)
    const page = () => (
      <TwoStepPage
        csrf={csrf.token}
        returnTo={returnTo}
        recovery={recovery}
        totp={totp}
        passkeys={passkeys}
        requiredBy={session.pending ? undefined : app.name}
        error={again?.error()}
      />
    )
    const speech = speechOf(ctx.config, request, { user: session.user, returnTo })
    return htmlPage(page, { status: again?.status, headers: again?.headers, formAction: app.formAction, speech })
  }

  return new Elysia({ name: 'second-factor' })
    .post(
      '/login/passkey/options',
      async function passkeyOptions({ request, body }) {
        const binding = await formBinding(ctx, request, body.csrf_token)
        if (!binding || !ctx.config.passkeys) throw forbidden()
        return json(await signInOptions(ctx, binding.secret), 200, NO_STORE)
      },
      { parse: parsePageForm, body: PasskeyForm },
    )
    .post(
      '/login/passkey',
      async function signInWithPasskey({ request, body }) {
        const binding = await formBinding(ctx, request, body.csrf_token)
        if (!binding) throw forbidden()
        const returnTo = safeReturnTo(body.return_to)
        let verified
        try {
          verified = await verifyPasskeySignIn(ctx, binding.secret, body.credential)
        } catch (error) {
          if (!(error instanceof PasskeyRefused)) throw error
          ctx.log.warn('sign-in failed', { reason: 'passkey' })
          ctx.metrics.signIn('passkey', 'failure')
          await ctx.audit.record('sign_in.failed', { request, detail: { method: 'passkey' } })
          return loginPage(ctx, request, binding.session?.pending ? undefined : binding.session, returnTo, { status: 401, error: () => sayError(error) })
        }
        ctx.metrics.signIn('passkey', 'success')
        const amr = passkeyAmr(verified.userVerified)
        // Without user verification a passkey is one factor: a user with TOTP still gives a code,
        // and the two-step page records how the sign-in ends.
        const pending = !verified.userVerified && (await hasTotp(ctx, verified.userId))
        const started = await startSession(ctx, request, verified.userId, returnTo, { amr, pending })
        if (!pending) await ctx.audit.record('sign_in.succeeded', { userId: verified.userId, request, detail: { method: 'passkey' } })
        return started
      },
      { parse: parsePageForm, body: PasskeyForm },
    )
    .get(
      '/login/two-step',
      async function showTwoStep({ request, query }) {
        const returnTo = safeReturnTo(query.return_to)
        const session = await readAnySession(ctx, request)
        if (!session) return seeOther(loginUrl(returnTo ?? '/account'))
        if (!session.pending && hasTwoFactors(session)) return seeOther(returnTo ?? '/account')
        return twoStepPage(request, session, returnTo, query.recovery === '1')
      },
      { query: TwoStepQuery },
    )
    .post(
      '/login/two-step',
      async function verifyTwoStep({ request, body }) {
        const binding = await formBinding(ctx, request, body.csrf_token)
        const session = binding?.session
        if (!session) throw forbidden()
        const returnTo = safeReturnTo(body.return_to)
        const recovery = body.recovery_code !== undefined
        const again = (status: number, error: () => string, headers?: Record<string, string>) => twoStepPage(request, session, returnTo, recovery, { status, error, headers })
        // The same budgets as passwords (SPEC): the address's, then the account's back-off.
        const account = emailHash(session.user.email)
        const throttled = await limits.takeAttempt(ctx, request, account, 'two-step throttled')
        if (throttled) {
          ctx.metrics.signIn(recovery ? 'recovery_code' : 'two_step', 'throttled')
          const count = throttled.wait
          return again(429, () => (throttled.limit === 'address' ? t('twoStep.tooManyNetwork', { count }) : t('twoStep.tooManyAccount', { count })), { 'retry-after': String(count) })
        }
        const accepted = recovery ? await acceptRecoveryCode(ctx, session.user.id, body.recovery_code ?? '') : await acceptTotpCode(ctx, session.user.id, body.code ?? '')
        if (!accepted) {
          ctx.log.warn('two-step failed', { reason: recovery ? 'recovery code' : 'code', email_hash: account })
          ctx.metrics.signIn(recovery ? 'recovery_code' : 'two_step', 'failure')
          await ctx.audit.record('sign_in.failed', { userId: session.user.id, request, detail: { method: recovery ? 'recovery_code' : 'two_step' } })
          return again(401, () => (recovery ? t('twoStep.invalidRecovery') : t('twoStep.invalidCode')))
        }
        await limits.succeeded(account)
        ctx.metrics.signIn(recovery ? 'recovery_code' : 'two_step', 'success')
        const signedIn = await startSession(ctx, request, session.user.id, returnTo, { amr: withOtp(session.amr) })
        await ctx.audit.record('sign_in.succeeded', { userId: session.user.id, request, detail: { method: recovery ? 'recovery_code' : 'two_step' } })
        return signedIn
      },
      { parse: parsePageForm, body: TwoStepForm },
    )

}
