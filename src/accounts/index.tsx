/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { PageError } from '../lib/errors'
import { clearCookie, cookie } from '../lib/cookies'
import { decoyPasswordHash, hashPassword, verifyPassword } from '../lib/crypto'
import { listAuthorizedApps, revokeAccess } from '../oauth/consents'
import { htmlPage, seeOther } from '../views/page'
import { avatarSvg, avatarUrlOf } from './avatar'
import { CsrfForm, LoginForm, ReturnToQuery, RevokeForm, SignupForm } from './model'
import { AccountPage, LoginPage, SignupPage } from './pages'
import { LoginThrottle } from './throttle'
import { SESSION_COOKIE, SESSION_TTL_MS, createSession, csrfValid, deleteSession } from './sessions'
import {
  EmailTakenError,
  UserInputError,
  checkFullName,
  checkPassword,
  findUserByEmail,
  insertUser,
  normalizeEmail,
} from './users'
import { appNameFor, formCsrf, loginUrl, readSession, safeReturnTo, submittedCsrfSecret } from './web'

const forbidden = () => new PageError(403, 'Request refused', 'This form has expired or did not come from this site. Go back, reload the page and try again.')

export function accountRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  const signupOpen = ctx.config.signup === 'open'
  const throttle = new LoginThrottle(ctx.clock)

  async function startSession(userId: string, returnTo: string | undefined): Promise<Response> {
    const token = await ctx.writer.write(() => createSession(ctx.db, userId, ctx.clock.now()))
    const sessionCookie = cookie(SESSION_COOKIE, token, { secure, maxAgeSeconds: SESSION_TTL_MS / 1000 })
    return seeOther(returnTo ?? '/account', [sessionCookie])
  }

  function requireSignupOpen() {
    if (!signupOpen) throw new PageError(404, 'Not found', 'Sign-up is closed on this server.')
  }

  return new Elysia({ name: 'accounts' })
    .get('/', () => seeOther('/account'))
    .get(
      '/login',
      function showLogin({ request, query }) {
        const returnTo = safeReturnTo(query.return_to)
        const session = readSession(ctx, request)
        if (session) return seeOther(returnTo ?? '/account')
        const csrf = formCsrf(ctx, request, session)
        const page = <LoginPage csrf={csrf.token} returnTo={returnTo} appName={appNameFor(ctx, returnTo)} signupOpen={signupOpen} />
        return htmlPage(page, { cookies: csrf.cookies })
      },
      { query: ReturnToQuery },
    )
    .post(
      '/login',
      async function signIn({ request, body }) {
        const session = readSession(ctx, request)
        if (!csrfValid(submittedCsrfSecret(ctx, request, session), body.csrf_token)) throw forbidden()
        const returnTo = safeReturnTo(body.return_to)
        const email = (body.email ?? '').trim().toLowerCase()
        const again = (status: number, error: string, headers?: Record<string, string>) => {
          const csrf = formCsrf(ctx, request, session)
          const page = (
            <LoginPage csrf={csrf.token} returnTo={returnTo} appName={appNameFor(ctx, returnTo)} email={email} error={error} signupOpen={signupOpen} />
          )
          return htmlPage(page, { status, cookies: csrf.cookies, headers })
        }
        const wait = throttle.retryAfter(email)
        if (wait > 0)
          return again(429, `Too many failed sign-ins for this account. Try again in ${wait} seconds.`, { 'retry-after': String(wait) })
        const user = email ? findUserByEmail(ctx.db, email) : undefined
        // Spend the same time whether or not the email exists, and say the same thing.
        const ok = await verifyPassword(body.password ?? '', user?.passwordHash ?? (await decoyPasswordHash()))
        if (!user || !ok) {
          throttle.failed(email)
          return again(401, 'Invalid email or password')
        }
        throttle.succeeded(email)
        return startSession(user.id, returnTo)
      },
      { body: LoginForm },
    )
    .get(
      '/signup',
      function showSignup({ request, query }) {
        requireSignupOpen()
        const csrf = formCsrf(ctx, request)
        const returnTo = safeReturnTo(query.return_to)
        return htmlPage(<SignupPage csrf={csrf.token} returnTo={returnTo} appName={appNameFor(ctx, returnTo)} />, { cookies: csrf.cookies })
      },
      { query: ReturnToQuery },
    )
    .post(
      '/signup',
      async function signUp({ request, body }) {
        requireSignupOpen()
        const session = readSession(ctx, request)
        if (!csrfValid(submittedCsrfSecret(ctx, request, session), body.csrf_token)) throw forbidden()
        const returnTo = safeReturnTo(body.return_to)
        const again = (error: string, status: number) => {
          const csrf = formCsrf(ctx, request, session)
          const page = (
            <SignupPage csrf={csrf.token} returnTo={returnTo} appName={appNameFor(ctx, returnTo)} error={error} fullName={body.full_name} email={body.email} />
          )
          return htmlPage(page, { status, cookies: csrf.cookies })
        }
        try {
          const fullName = checkFullName(body.full_name ?? '')
          const email = normalizeEmail(body.email ?? '')
          const passwordHash = await hashPassword(checkPassword(body.password ?? ''))
          const user = await ctx.writer.write(() =>
            insertUser(ctx.db, { email, fullName, avatarUrl: null, passwordHash }, ctx.clock.now()),
          )
          return startSession(user.id, returnTo)
        } catch (error) {
          if (error instanceof UserInputError) return again(capitalize(error.message) + '.', 400)
          if (error instanceof EmailTakenError) return again('An account with this email already exists.', 409)
          throw error
        }
      },
      { body: SignupForm },
    )
    .post(
      '/logout',
      async function signOut({ request, body }) {
        const session = readSession(ctx, request)
        if (!csrfValid(submittedCsrfSecret(ctx, request, session), body.csrf_token)) throw forbidden()
        if (session) await ctx.writer.write(() => deleteSession(ctx.db, session.token))
        return seeOther('/login', [clearCookie(SESSION_COOKIE, secure)])
      },
      { body: CsrfForm },
    )
    .get('/account', function showAccount({ request }) {
      const session = readSession(ctx, request)
      if (!session) return seeOther(loginUrl('/account'))
      const apps = listAuthorizedApps(ctx.db, session.user.id)
      const csrf = formCsrf(ctx, request, session)
      return htmlPage(<AccountPage user={session.user} avatarUrl={avatarUrlOf(ctx.config, session.user)} apps={apps} csrf={csrf.token} />)
    })
    .post(
      '/account/revoke',
      async function revokeApp({ request, body }) {
        const session = readSession(ctx, request)
        if (!session || !csrfValid(session.token, body.csrf_token)) throw forbidden()
        const clientId = body.client_id ?? ''
        await ctx.writer.write(() => revokeAccess(ctx.db, ctx.tokens, session.user.id, clientId))
        return seeOther('/account')
      },
      { body: RevokeForm },
    )
    .get('/avatars/:file', function showAvatar({ params }) {
      const svg = avatarSvg(ctx.db, params.file)
      if (!svg) throw new PageError(404, 'Not found', 'There is no such picture.')
      return new Response(svg, {
        headers: {
          'content-type': 'image/svg+xml',
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
          'x-content-type-options': 'nosniff',
          'cache-control': 'public, max-age=3600',
        },
      })
    })
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1)
}
