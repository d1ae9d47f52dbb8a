/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { clearCookie } from '../lib/cookies'
import { decoyPasswordHash, hashPassword, sha256, verifyPassword } from '../lib/crypto'
import { PageError } from '../lib/errors'
import { htmlPage, seeOther } from '../views/page'
import { clientAddressOf } from '../web/client-address'
import { parsePageForm } from '../web/forms'
import { CsrfForm, LoginForm, ReturnToQuery, SignupForm } from './model'
import { VERIFY_SIGN_IN_NOTE } from './email-pages'
import { LoginPage, SignupPage } from './pages'
import { cookieNames, deleteSession, type Session } from './sessions'
import { hasTotp, startSession } from './signed-in'
import { SignInLimits } from './throttle'
import { verifyEmailMessage, recipient } from '../mail/messages'
import { newLink } from './email-links'
import { type User, EmailTakenError, PASSWORD_MAX, PASSWORD_MIN, UserInputError, checkFullName, checkPassword, emailSpelling, insertUser, normalizeEmail } from './users'
import { csrfAccepted, formCsrf, readSession, returningApp, safeReturnTo } from './web'
import { currentSpeech, t } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

export const forbidden = () =>
  new PageError(403, 'error.forbidden')

/** The email as typed at sign-in, normalized; undefined when it cannot be anyone's. */
function signInEmail(raw: string | undefined): string | undefined {
  try {
    return emailSpelling(raw ?? '')
  } catch {
    return undefined
  }
}

/** A short, stable hash of an email for the log and the account throttle: events can be correlated, the address is not written. */
export const emailHash = (email: string) => sha256(email).slice(0, 16)

/** "Continue with NAME" for each upstream provider (SPEC "Sign in with another account"). */
export async function providerButtons(ctx: AppContext): Promise<{ id: string; name: string }[]> {
  return (await ctx.store.providers.listProviders()).map((p) => ({ id: p.id, name: p.name }))
}

/** The sign-in page for this request (again, after a failed attempt: with the error and status). */
export async function loginPage(
  ctx: AppContext,
  request: Request,
  session: Session | undefined,
  returnTo: string | undefined,
  again?: { status: number; error: () => string; email?: string; headers?: Record<string, string> },
): Promise<Response> {
  const csrf = formCsrf(ctx, request, session)
  const [app, providers] = await Promise.all([returningApp(ctx, returnTo), providerButtons(ctx)])
  const page = () => (
    <LoginPage
      providers={providers}
      csrf={csrf.token}
      returnTo={returnTo}
      appName={app.name}
      email={again?.email}
      error={again?.error()}
      signupOpen={ctx.config.signup === 'open'}
      passkeys={ctx.config.passkeys !== null}
      mail={ctx.config.smtpUrl !== null}
      note={returnTo?.startsWith('/verify-email?') ? VERIFY_SIGN_IN_NOTE() : undefined}
    />
  )
  const speech = speechOf(ctx.config, request, { user: session?.user, returnTo })
  return htmlPage(page, { status: again?.status, cookies: csrf.cookies, headers: again?.headers, formAction: app.formAction, speech })
}

/** Sign-in, sign-up and sign-out: the pages that start and end sessions. */
export function signInRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  const names = cookieNames(secure)
  const signupOpen = ctx.config.signup === 'open'
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)

  /** One password check for this client address, or the seconds it must wait (counted before any hashing). */
  const takeAddressCheck = (request: Request, event: string) => limits.takeAddressCheck(ctx, request, event)

  function requireSignupOpen() {
    if (!signupOpen) throw new PageError(404, 'error.signupClosed')
  }

  return new Elysia({ name: 'sign-in' })
    .get(
      '/login',
      async function showLogin({ request, query }) {
        const returnTo = safeReturnTo(query.return_to)
        const session = await readSession(ctx, request)
        // reauth: an app asked for a fresh sign-in (OpenID Connect prompt=login or max_age).
        if (session && query.reauth !== '1') return seeOther(returnTo ?? '/account')
        return loginPage(ctx, request, session, returnTo)
      },
      { query: ReturnToQuery },
    )
    .post(
      '/login',
      async function signIn({ request, body }) {
        const session = await readSession(ctx, request)
        if (!csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const returnTo = safeReturnTo(body.return_to)
        const email = signInEmail(body.email)
        const password = body.password ?? ''
        const again = (status: number, error: () => string, headers?: Record<string, string>) =>
          loginPage(ctx, request, session, returnTo, { status, error, headers, email: email ?? '' })
        const client = clientAddressOf(request, ctx.config.trustedProxies)
        // Nothing that cannot be an account's email and password is worth a hash (SPEC: 8–256 characters).
        if (!email || password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
          ctx.log.warn('sign-in failed', { reason: 'malformed', client })
          ctx.metrics.signIn('password', 'failure')
          await ctx.audit.record('sign_in.failed', { request, detail: { method: 'password', reason: 'malformed' } })
          return again(401, () => t('signIn.invalid'))
        }
        // Both limits are taken before any hashing: the address's budget first, then the account's.
        const account = emailHash(email)
        const throttled = await limits.takeAttempt(ctx, request, account, 'sign-in throttled')
        if (throttled) {
          ctx.metrics.signIn('password', 'throttled')
          const count = throttled.wait
          return again(429, () => (throttled.limit === 'address' ? t('signIn.tooManyNetwork', { count }) : t('signIn.tooManyAccount', { count })), { 'retry-after': String(count) })
        }
        const user = await ctx.store.users.findUserByEmail(email)
        // Spend the same time whether or not the email exists (or has a password), and say the same thing.
        const ok = await verifyPassword(password, user?.passwordHash || (await decoyPasswordHash()))
        if (!user || !user.passwordHash || !ok) {
          ctx.log.warn('sign-in failed', { reason: 'credentials', email_hash: account, client })
          ctx.metrics.signIn('password', 'failure')
          await ctx.audit.record('sign_in.failed', { userId: user?.id, request, detail: { method: 'password', reason: 'credentials' } })
          return again(401, () => t('signIn.invalid'))
        }
        ctx.metrics.signIn('password', 'success')
        // With TOTP the attempt stays counted until the code is right too: guessing codes after
        // the right password costs the same back-off as guessing passwords. Nor is it a sign-in
        // yet (SPEC "Audit log"): the two-step page records how it ends.
        if (await hasTotp(ctx, user.id)) return startSession(ctx, request, user.id, returnTo, { amr: ['pwd'], pending: true })
        await limits.succeeded(account)
        const signedIn = await startSession(ctx, request, user.id, returnTo, { amr: ['pwd'] })
        await ctx.audit.record('sign_in.succeeded', { userId: user.id, request, detail: { method: 'password' } })
        return signedIn
      },
      { parse: parsePageForm, body: LoginForm },
    )
    .get(
      '/signup',
      async function showSignup({ request, query }) {
        requireSignupOpen()
        const session = await readSession(ctx, request)
        const csrf = formCsrf(ctx, request, session)
        const returnTo = safeReturnTo(query.return_to)
        const [app, providers] = await Promise.all([returningApp(ctx, returnTo), providerButtons(ctx)])
        const speech = speechOf(ctx.config, request, { user: session?.user, returnTo })
        return htmlPage(() => <SignupPage csrf={csrf.token} returnTo={returnTo} appName={app.name} providers={providers} />, { cookies: csrf.cookies, formAction: app.formAction, speech })
      },
      { query: ReturnToQuery },
    )
    .post(
      '/signup',
      async function signUp({ request, body }) {
        const session = await readSession(ctx, request)
        if (!csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const returnTo = safeReturnTo(body.return_to)
        const app = await returningApp(ctx, returnTo)
        const again = (error: () => string, status: number, headers?: Record<string, string>) => {
          const csrf = formCsrf(ctx, request, session)
          const page = () => <SignupPage csrf={csrf.token} returnTo={returnTo} appName={app.name} error={error()} fullName={body.full_name} email={body.email} />
          const speech = speechOf(ctx.config, request, { user: session?.user, returnTo })
          return htmlPage(page, { status, cookies: csrf.cookies, headers, formAction: app.formAction, speech })
        }
        try {
          const fullName = checkFullName(body.full_name ?? '')
          const email = normalizeEmail(body.email ?? '')
          // SIGNUP=domain:… (SPEC): the part after the last @, exactly (a subdomain is another domain).
          const domains = ctx.config.signupDomains
          if (domains.length > 0 && !domains.includes(email.slice(email.lastIndexOf('@') + 1)))
            return again(() => t('signUp.domainOnly', { domains: new Intl.ListFormat(currentSpeech().locale, { type: 'disjunction' }).format(domains) }), 400)
          const password = checkPassword(body.password ?? '')
          const wait = await takeAddressCheck(request, 'sign-up throttled')
          if (wait > 0) return again(() => t('signUp.tooMany', { count: wait }), 429, { 'retry-after': String(wait) })
          const passwordHash = await hashPassword(password)
          const now = ctx.clock.now()
          // With mail, the verification link is written with the account (SPEC "Verify"); when
          // verification is required, the link continues to where the sign-up was going.
          const continueTo = ctx.config.emailVerification === 'required' ? returnTo : undefined
          const welcome = ctx.config.smtpUrl === null ? undefined : (user: User) => {
            const link = newLink(ctx.config, 'verify', user.id, email, now, continueTo)
            return { token: link.token, mail: verifyEmailMessage(recipient(ctx.config, { email }), link.url) }
          }
          const user = await insertUser(ctx.store, { email, fullName, avatarUrl: null, passwordHash }, now, welcome)
          return startSession(ctx, request, user.id, returnTo, { amr: ['pwd'], signUp: true })
        } catch (error) {
          if (error instanceof UserInputError) return again(() => sayError(error), 400)
          if (error instanceof EmailTakenError) return again(() => t('signUp.emailTaken'), 409)
          throw error
        }
      },
      {
        // A closed sign-up reads no body at all: 404 whatever is sent.
        parse: (context) => {
          requireSignupOpen()
          return parsePageForm(context)
        },
        body: SignupForm,
      },
    )
    .post(
      '/logout',
      async function signOut({ request, body }) {
        const session = await readSession(ctx, request)
        if (!csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        if (session) await deleteSession(ctx.store, session.token)
        return seeOther('/login', [clearCookie(names.session, secure)])
      },
      { parse: parsePageForm, body: CsrfForm },
    )
}
