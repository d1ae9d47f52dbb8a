/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import type { TokenUse } from '../db/store'
import { hashPassword } from '../lib/crypto'
import { PageError } from '../lib/errors'
import { emailChangedMessage, passwordChangedMessage, resetPasswordMessage, verifyEmailMessage } from '../mail/messages'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { linkTokenHash, newLink } from './email-links'
import { CheckEmailPage, ForgotPasswordPage, NoticePage, ResetPasswordPage } from './email-pages'
import { accountPage } from './security'
import type { Session } from './sessions'
import { emailHash, forbidden } from './sign-in'
import { SignInLimits } from './throttle'
import { UserInputError, checkPassword, normalizeEmail } from './users'
import { csrfAccepted, formBinding, formCsrf, readSession } from './web'

const field = t.Optional(t.String())
const EmailForm = t.Object({ csrf_token: field, email: field })
const ResetForm = t.Object({ csrf_token: field, token: field, password: field })
const TokenQuery = t.Object({ token: field })

const GONE = (what: string, again: { href: string; label: string }) =>
  htmlPage(<NoticePage title="This link no longer works" message={`This ${what} link was already used, has expired, or is not one of ours.`} link={again} />, { status: 410 })

/** The "Check your email" page of EMAIL_VERIFICATION=required. */
export function checkEmailPage(ctx: AppContext, request: Request, session: Session, resent = false): Response {
  const csrf = formCsrf(ctx, request, session)
  return htmlPage(<CheckEmailPage csrf={csrf.token} email={session.user.email} resent={resent} />, { status: resent ? 200 : 403 })
}

/**
 * Mail-backed pages (only with SMTP_URL; without it they are 404): verify an address, forgot and
 * reset the password (also where an invitation chooses one), change the email on /account.
 * Every message is written with the change that causes it, and sent by the outbox.
 */
export function emailRoutes(ctx: AppContext) {
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)
  const requireMail = () => {
    if (ctx.config.smtpUrl === null) throw new PageError(404, 'Not found', 'This server does not send mail.')
  }
  const now = () => ctx.clock.now()

  /** A verify link for the address, unless it has had three messages this hour. */
  async function sendVerifyLink(userId: string, email: string): Promise<boolean> {
    if ((await limits.takeMail(emailHash(email))) > 0) return false
    const link = newLink(ctx.config, 'verify', userId, email, now())
    await ctx.store.mail.issueToken(link.token, verifyEmailMessage(email, link.url), now())
    return true
  }

  return new Elysia({ name: 'email' })
    .get('/forgot-password', function showForgot({ request }) {
      requireMail()
      const csrf = formCsrf(ctx, request, undefined)
      return htmlPage(<ForgotPasswordPage csrf={csrf.token} />, { cookies: csrf.cookies })
    })
    .post(
      '/forgot-password',
      async function forgotPassword({ request, body }) {
        requireMail()
        if (!(await formBinding(ctx, request, body.csrf_token))) throw forbidden()
        const answer = (status = 200, error?: string, headers?: Record<string, string>) => {
          const csrf = formCsrf(ctx, request, undefined)
          return htmlPage(<ForgotPasswordPage csrf={csrf.token} sent={!error} error={error} />, { status, cookies: csrf.cookies, headers })
        }
        const wait = await limits.takeAddressCheck(ctx, request, 'password reset throttled')
        if (wait > 0) return answer(429, `Too many requests from your network. Try again in ${wait} seconds.`, { 'retry-after': String(wait) })
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
          void ctx.store.mail.issueToken(link.token, resetPasswordMessage(email, link.url), now()).catch(() => ctx.log.warn('reset link not written'))
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
        if (!token) return GONE('password', { href: '/forgot-password', label: 'Ask for a new link' })
        const csrf = formCsrf(ctx, request, await readSession(ctx, request))
        return htmlPage(<ResetPasswordPage csrf={csrf.token} token={query.token!} invite={token.purpose === 'invite'} />, { cookies: csrf.cookies })
      },
      { query: TokenQuery },
    )
    .post(
      '/reset-password',
      async function resetPassword({ request, body }) {
        if (!(await formBinding(ctx, request, body.csrf_token))) throw forbidden()
        const hash = linkTokenHash(body.token)
        if (!hash) return GONE('password', { href: '/forgot-password', label: 'Ask for a new link' })
        let password: string
        try {
          password = checkPassword(body.password ?? '')
        } catch (error) {
          if (!(error instanceof UserInputError)) throw error
          const token = await ctx.store.mail.findToken(hash, ['reset', 'invite'], now())
          if (!token) return GONE('password', { href: '/forgot-password', label: 'Ask for a new link' })
          const csrf = formCsrf(ctx, request, await readSession(ctx, request))
          return htmlPage(<ResetPasswordPage csrf={csrf.token} token={body.token!} invite={token.purpose === 'invite'} error={`The ${error.message}.`} />, { status: 400 })
        }
        const passwordHash = await hashPassword(password)
        const outcome = await ctx.store.mail.useToken(hash, ['reset', 'invite'], now(), (token, currentEmail): TokenUse => ({
          passwordHash,
          // The link reached the mailbox: the address is the user's.
          emailVerified: token.email === currentEmail ? true : undefined,
          endSessions: true,
          mail: token.purpose === 'reset' ? [passwordChangedMessage(currentEmail)] : [],
        }))
        if (!outcome.ok) return GONE('password', { href: '/forgot-password', label: 'Ask for a new link' })
        await ctx.audit.record('password.reset', { userId: outcome.token.userId, request, detail: { via: outcome.token.purpose } })
        return htmlPage(<NoticePage title="Password set" message="Your password is set. Sign in with it." link={{ href: '/login', label: 'Sign in' }} />)
      },
      { parse: parsePageForm, body: ResetForm },
    )
    .get(
      '/verify-email',
      async function verifyEmail({ query }) {
        const hash = linkTokenHash(query.token)
        const outcome = hash
          ? await ctx.store.mail.useToken(hash, ['verify'], now(), (token, currentEmail): TokenUse => {
              if (token.email === currentEmail) return { emailVerified: true }
              // An email change: the new address replaces the old only now, and the old one is told.
              return { email: token.email, emailVerified: true, mail: [emailChangedMessage(currentEmail, token.email)] }
            })
          : ({ ok: false, reason: 'unknown' } as const)
        if (!outcome.ok && outcome.reason === 'taken')
          return htmlPage(<NoticePage title="Address taken" message="Another account uses this address now, so it cannot be yours. Nothing changed." link={{ href: '/account', label: 'Your account' }} />, {
            status: 409,
          })
        if (!outcome.ok) return GONE('verification', { href: '/account', label: 'Send a new link from your account' })
        return htmlPage(<NoticePage title="Email verified" message={`${outcome.token.email} is verified.`} link={{ href: '/account', label: 'Your account' }} />)
      },
      { query: TokenQuery },
    )
    .post(
      '/verify-email/resend',
      async function resendVerification({ request, body }) {
        requireMail()
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        if (session.user.emailVerified) return seeOther('/account')
        const sent = await sendVerifyLink(session.user.id, session.user.email)
        if (!sent) return accountPage(ctx, request, session, { status: 429, error: 'Three links were sent to this address in the last hour. Try again later.' })
        return ctx.config.emailVerification === 'required' ? checkEmailPage(ctx, request, session, true) : accountPage(ctx, request, session, undefined, 'We sent a new link.')
      },
      { parse: parsePageForm, body: EmailForm },
    )
    .post(
      '/account/email',
      async function changeEmail({ request, body }) {
        requireMail()
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        let email: string
        try {
          email = normalizeEmail(body.email ?? '')
        } catch (error) {
          if (!(error instanceof UserInputError)) throw error
          return accountPage(ctx, request, session, { status: 400, error: `The ${error.message}.` })
        }
        if (email === session.user.email) return accountPage(ctx, request, session, { status: 400, error: 'That is already your email.' })
        // Nothing is sent to either address when the new one belongs to another account.
        if (await ctx.store.users.findUserByEmail(email)) return accountPage(ctx, request, session, { status: 409, error: 'An account with this email already exists.' })
        if (!(await sendVerifyLink(session.user.id, email)))
          return accountPage(ctx, request, session, { status: 429, error: 'Three links were sent to this address in the last hour. Try again later.' })
        return accountPage(ctx, request, session, undefined, `We sent a link to ${email}. Your email changes when you open it.`)
      },
      { parse: parsePageForm, body: EmailForm },
    )
}
