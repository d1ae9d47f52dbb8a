/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import type { EmailToken, TokenUse } from '../db/store'
import { hashPassword } from '../lib/crypto'
import { PageError } from '../lib/errors'
import { passwordChangedMessage, resetPasswordMessage, verifyEmailMessage, recipient } from '../mail/messages'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { linkTokenHash, newLink } from './email-links'
import { CheckEmailPage, ConfirmVerifyPage, ForgotPasswordPage, NoticePage, RecoveredPage, ResetPasswordPage } from './email-pages'
import { accountPage } from './security'
import type { Session } from './sessions'
import { checkEmailUrl } from './signed-in'
import { emailHash, forbidden } from './sign-in'
import { SignInLimits } from './throttle'
import { UserInputError, checkPassword, normalizeEmail, type User } from './users'
import { csrfAccepted, formBinding, formCsrf, loginUrl, readSession, safeReturnTo } from './web'
import { t as msg, type Speech } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

const field = t.Optional(t.String())
const EmailForm = t.Object({ csrf_token: field, email: field, return_to: field })
const ResetForm = t.Object({ csrf_token: field, token: field, password: field })
const TokenQuery = t.Object({ token: field, return_to: field })
const VerifyForm = t.Object({ csrf_token: field, token: field, return_to: field })
const ReturnQuery = t.Object({ return_to: field })

/** A link that is used up, expired or not ours (`what`: the message naming its kind); `again`: where to get a new one. */
export const GONE = (speech: Speech, what: () => string, again: () => { href: string; label: string }) =>
  htmlPage(() => <NoticePage title={msg('link.goneTitle')} message={what()} link={again()} />, { status: 410, speech })

/** A link of another account's (a verify link, an email change) opened by this session: it changes nothing, and says whose it is not. */
export const OTHER_ACCOUNT = (speech: Speech, path: string, whose: () => string) =>
  htmlPage(
    () => <NoticePage title={msg('link.otherTitle')} message={whose()} link={{ href: `/login?reauth=1&return_to=${encodeURIComponent(path)}`, label: msg('link.signInThat') }} />,
    { status: 403, speech },
  )

/** The "Check your email" page of EMAIL_VERIFICATION=required; `returnTo`: where the user was going (its Resend's link continues there). */
export function checkEmailPage(ctx: AppContext, request: Request, session: Session, resent = false, returnTo?: string): Response {
  const csrf = formCsrf(ctx, request, session)
  return htmlPage(() => <CheckEmailPage csrf={csrf.token} email={session.user.email} resent={resent} returnTo={returnTo} />, {
    status: resent ? 200 : 403,
    // The authorization request it continues to decides the language (its ui_locales, a pushed one's too).
    speech: speechOf(ctx.config, request, { user: session.user, returnTo }),
  })
}

/**
 * Mail-backed pages (only with SMTP_URL; without it they are 404): verify an address, forgot and
 * reset the password (also where an invitation chooses one; on an unverified account, a recovery).
 * Changing the email: email-change.tsx.
 * Every message is written with the change that causes it, and sent by the outbox.
 */
export function emailRoutes(ctx: AppContext) {
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)
  const requireMail = () => {
    if (ctx.config.smtpUrl === null) throw new PageError(404, 'error.noMail')
  }
  const now = () => ctx.clock.now()
  const resetGone = (request: Request) => GONE(speechOf(ctx.config, request), () => msg('link.gonePassword'), () => ({ href: '/forgot-password', label: msg('link.askNew') }))
  const verifyGone = (request: Request) => GONE(speechOf(ctx.config, request), () => msg('link.goneVerification'), () => ({ href: '/account', label: msg('link.sendNew') }))
  /** The verify page of a link (its token checked: base64url), keeping where the link continues to. */
  const verifyPath = (token: string, returnTo: string | undefined) => `/verify-email?token=${token}${returnTo ? `&return_to=${encodeURIComponent(returnTo)}` : ''}`
  /** Whether the link's address is still its account's (an email change makes older links stale). */
  const stillTheAddress = async (token: EmailToken) => (await ctx.store.users.findUser(token.userId))?.email === token.email

  /** A verify link for the address (continuing to `returnTo`), unless it has had three messages this hour. */
  async function sendVerifyLink(user: User, returnTo?: string): Promise<boolean> {
    const { email } = user
    if ((await limits.takeMail(emailHash(email))) > 0) return false
    const link = newLink(ctx.config, 'verify', user.id, email, now(), returnTo)
    await ctx.store.mail.issueToken(link.token, verifyEmailMessage(recipient(ctx.config, user), link.url), now())
    return true
  }

  return new Elysia({ name: 'email' })
    .get('/forgot-password', function showForgot({ request }) {
      requireMail()
      const csrf = formCsrf(ctx, request, undefined)
      return htmlPage(() => <ForgotPasswordPage csrf={csrf.token} />, { cookies: csrf.cookies, speech: speechOf(ctx.config, request) })
    })
    .post(
      '/forgot-password',
      async function forgotPassword({ request, body }) {
        requireMail()
        if (!(await formBinding(ctx, request, body.csrf_token))) throw forbidden()
        const answer = (status = 200, error?: () => string, headers?: Record<string, string>) => {
          const csrf = formCsrf(ctx, request, undefined)
          return htmlPage(() => <ForgotPasswordPage csrf={csrf.token} sent={!error} error={error?.()} />, { status, cookies: csrf.cookies, headers, speech: speechOf(ctx.config, request) })
        }
        const wait = await limits.takeAddressCheck(ctx, request, 'password reset throttled')
        if (wait > 0) return answer(429, () => msg('forgot.tooMany', { count: wait }), { 'retry-after': String(wait) })
        let email: string
        try {
          email = normalizeEmail(body.email ?? '')
        } catch {
          return answer()
        }
        // The same page whether or not the address has an account, and the same work before the
        // answer: the per-address budget is taken either way, and the link (with its message, in
        // one transaction) is written after the answer, so its commit cannot be timed.
        const allowed = (await limits.takeMail(emailHash(email))) === 0
        const user = await ctx.store.users.findUserByEmail(email)
        if (allowed && user) {
          const link = newLink(ctx.config, 'reset', user.id, email, now())
          void ctx.store.mail.issueToken(link.token, resetPasswordMessage(recipient(ctx.config, user), link.url), now()).catch(() => ctx.log.warn('reset link not written'))
        }
        return answer()
      },
      { parse: parsePageForm, body: EmailForm },
    )
    .get(
      '/reset-password',
      async function showReset({ request, query }) {
        const hash = linkTokenHash(query.token)
        const token = hash && (await ctx.store.mail.findToken(hash, ['reset', 'invite'], now()))
        if (!token || !(await stillTheAddress(token))) return resetGone(request)
        const csrf = formCsrf(ctx, request, await readSession(ctx, request))
        return htmlPage(() => <ResetPasswordPage csrf={csrf.token} token={query.token!} invite={token.purpose === 'invite'} />, { cookies: csrf.cookies, speech: speechOf(ctx.config, request) })
      },
      { query: TokenQuery },
    )
    .post(
      '/reset-password',
      async function resetPassword({ request, body }) {
        if (!(await formBinding(ctx, request, body.csrf_token))) throw forbidden()
        const hash = linkTokenHash(body.token)
        if (!hash) return resetGone(request)
        let password: string
        try {
          password = checkPassword(body.password ?? '')
        } catch (error) {
          if (!(error instanceof UserInputError)) throw error
          const token = await ctx.store.mail.findToken(hash, ['reset', 'invite'], now())
          if (!token) return resetGone(request)
          const csrf = formCsrf(ctx, request, await readSession(ctx, request))
          return htmlPage(() => <ResetPasswordPage csrf={csrf.token} token={body.token!} invite={token.purpose === 'invite'} error={sayError(error, 'the')} />, { status: 400, speech: speechOf(ctx.config, request) })
        }
        const passwordHash = await hashPassword(password)
        const accountUrl = `${ctx.config.issuer}/account`
        // The notice is written in the owner's language (read before: the use below cannot wait).
        const found = await ctx.store.mail.findToken(hash, ['reset', 'invite'], now())
        const owner = found && (await ctx.store.users.findUser(found.userId))
        let stale = false
        const outcome = await ctx.store.mail.useToken(hash, ['reset', 'invite'], now(), (token, user): TokenUse => {
          // A link sent to an address the account no longer has (it changed since) is gone: the
          // old mailbox takes nothing over.
          stale = token.email !== user.email
          if (stale) return {}
          // The link reached the mailbox: the address is the user's.
          // SPEC "Recovery": sign-up needs no proof, so an unverified account may have been set up
          // by someone else with this address; its owner takes it back without what they added.
          const recover = !user.emailVerified
          const security = recover ? undefined : { passkeys: user.passkeys, totp: user.totp, accountUrl }
          return {
            passwordHash,
            emailVerified: true,
            endSessions: true,
            recover,
            mail: token.purpose === 'reset' ? [passwordChangedMessage(recipient(ctx.config, { ...owner, email: user.email }), security)] : [],
          }
        })
        if (!outcome.ok || stale) return resetGone(request)
        await ctx.audit.record('password.reset', { userId: outcome.token.userId, request, detail: { via: outcome.token.purpose, recovered: !!outcome.removed } })
        const speech = speechOf(ctx.config, request)
        const removed = outcome.removed
        if (removed) return htmlPage(() => <RecoveredPage removed={removed} />, { speech })
        return htmlPage(() => <NoticePage title={msg('reset.doneTitle')} message={msg('reset.done')} link={{ href: '/login', label: msg('reset.signIn') }} />, { speech })
      },
      { parse: parsePageForm, body: ResetForm },
    )
    .get(
      '/verify-email',
      async function showVerifyEmail({ request, query }) {
        const hash = linkTokenHash(query.token)
        const token = hash && (await ctx.store.mail.findToken(hash, ['verify'], now()))
        if (!token || !(await stillTheAddress(token))) return verifyGone(request)
        const returnTo = safeReturnTo(query.return_to)
        const path = verifyPath(query.token!, returnTo)
        const session = await readSession(ctx, request)
        // Opening the link changes nothing (a mail scanner opens links too): signed out, it asks
        // to sign in to the account first — and whoever never signed up is pointed to "Forgot
        // password", which recovers the account (SPEC "Recovery") — then comes back here.
        if (!session) return seeOther(loginUrl(path))
        const speech = speechOf(ctx.config, request, { user: session.user })
        if (session.user.id !== token.userId) return OTHER_ACCOUNT(speech, path, () => msg('link.otherSentFor'))
        const csrf = formCsrf(ctx, request, session)
        return htmlPage(() => <ConfirmVerifyPage csrf={csrf.token} token={query.token!} email={token.email} returnTo={returnTo} />, { speech })
      },
      { query: TokenQuery },
    )
    .post(
      '/verify-email',
      async function verifyEmail({ request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const hash = linkTokenHash(body.token)
        // A link's user never changes: the one found here is the one used below, or it is gone.
        const token = hash && (await ctx.store.mail.findToken(hash, ['verify'], now()))
        if (!hash || !token) return verifyGone(request)
        const returnTo = safeReturnTo(body.return_to)
        if (token.userId !== session.user.id) return OTHER_ACCOUNT(speechOf(ctx.config, request, { user: session.user }), verifyPath(body.token!, returnTo), () => msg('link.otherSentFor'))
        // A verify link only verifies the address it was sent to while it is still the account's;
        // an email change has links of its own (/confirm-email).
        let stale = false
        const outcome = await ctx.store.mail.useToken(hash, ['verify'], now(), (used, user): TokenUse => {
          stale = used.email !== user.email
          return stale ? {} : { emailVerified: true }
        })
        if (!outcome.ok || stale) return verifyGone(request)
        // SPEC (EMAIL_VERIFICATION=required): after the link, on to where the user was going.
        if (returnTo) return seeOther(returnTo)
        const verified = outcome.token.email
        return htmlPage(() => <NoticePage title={msg('email.verifiedTitle')} message={msg('email.verifiedText', { email: verified })} link={{ href: '/account', label: msg('link.yourAccount') }} />, {
          speech: speechOf(ctx.config, request, { user: session.user }),
        })
      },
      { parse: parsePageForm, body: VerifyForm },
    )
    .get(
      '/check-email',
      async function showCheckEmail({ request, query }) {
        requireMail()
        const returnTo = safeReturnTo(query.return_to)
        const session = await readSession(ctx, request)
        if (!session) return seeOther(loginUrl(checkEmailUrl(returnTo)))
        // A sign-in that a verify link asked for comes here first: on to its Confirm page.
        if (returnTo?.startsWith('/verify-email?')) return seeOther(returnTo)
        if (session.user.emailVerified || ctx.config.emailVerification !== 'required') return seeOther(returnTo ?? '/account')
        return checkEmailPage(ctx, request, session, false, returnTo)
      },
      { query: ReturnQuery },
    )
    .post(
      '/verify-email/resend',
      async function resendVerification({ request, body }) {
        requireMail()
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const returnTo = safeReturnTo(body.return_to)
        if (session.user.emailVerified) return seeOther(returnTo ?? '/account')
        const sent = await sendVerifyLink(session.user, returnTo)
        if (!sent) return accountPage(ctx, request, session, { status: 429, error: () => msg('account.linksPerHour') })
        return ctx.config.emailVerification === 'required' ? checkEmailPage(ctx, request, session, true, returnTo) : accountPage(ctx, request, session, undefined, () => msg('account.linkSentNew'))
      },
      { parse: parsePageForm, body: EmailForm },
    )
}
