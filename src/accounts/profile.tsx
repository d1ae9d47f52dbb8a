/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import { REAUTH_AFTER_MS } from '../admin/web'
import type { AppContext } from '../context'
import { clearCookie } from '../lib/cookies'
import { hashPassword, verifyPassword } from '../lib/crypto'
import { accountDeletedMessage, notify, passwordChangedMessage, recipient } from '../mail/messages'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { NoticePage } from './email-pages'
import { DeleteAccountPage, type AccountContents } from './profile-pages'
import { accountPage } from './security'
import { cookieNames, deleteSessionsOf, type Session } from './sessions'
import { emailHash, forbidden } from './sign-in'
import { SignInLimits } from './throttle'
import { PASSWORD_MAX, UserInputError, checkPassword, updateProfile } from './users'
import { csrfAccepted, formCsrf, loginUrl, readSession } from './web'
import { t as msg } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

// Every field optional: a form without its CSRF token is answered 403 by the handler, not 400.
const ProfileForm = t.Object({ csrf_token: t.Optional(t.String()), full_name: t.Optional(t.String()), avatar_url: t.Optional(t.String()) })
const ChangePasswordForm = t.Object({ csrf_token: t.Optional(t.String()), current_password: t.Optional(t.String()), new_password: t.Optional(t.String()) })
const DeleteAccountForm = t.Object({ csrf_token: t.Optional(t.String()), password: t.Optional(t.String()) })

const sentence = (message: string) => message[0]!.toUpperCase() + message.slice(1) + '.'

/**
 * SPEC "Your account and your sessions", Profile: the name and picture, "Change password" (the
 * current one first, guessed under the sign-in budgets; the other sessions end) and "Delete my
 * account" (the password again, or a passkey sign-in of the last 15 minutes for an account
 * without one; everything of the user goes in one write, and their tokens stop at once).
 */
export function profileRoutes(ctx: AppContext) {
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)
  const secure = ctx.config.secureCookies

  /** The signed-in session of a form with its CSRF token, or 403. */
  async function signedIn(request: Request, csrfToken: string | undefined): Promise<Session> {
    const session = await readSession(ctx, request)
    if (!session || !csrfAccepted(ctx, request, session, csrfToken)) throw forbidden()
    return session
  }

  /**
   * One guess at the user's password, counted like a sign-in's (SPEC "Sign-in throttling"): the
   * address's budget and the account's back-off are taken first; a right one clears the back-off.
   */
  async function passwordGuess(request: Request, session: Session, password: string): Promise<'right' | 'wrong' | { wait: number }> {
    const key = emailHash(session.user.email)
    const throttled = await limits.takeAttempt(ctx, request, key, 'password check throttled')
    if (throttled) return { wait: throttled.wait }
    const account = await ctx.store.users.findUserByEmail(session.user.email)
    const right = !!account?.passwordHash && password.length <= PASSWORD_MAX && (await verifyPassword(password, account.passwordHash))
    if (!right) {
      ctx.log.warn('password check failed', { email_hash: key })
      await ctx.audit.record('sign_in.failed', { userId: session.user.id, request, detail: { method: 'password', reason: 'credentials' } })
      return 'wrong'
    }
    await limits.succeeded(key)
    return 'right'
  }

  async function contentsOf(userId: string): Promise<AccountContents> {
    const [apps, settings, passkeys] = await Promise.all([ctx.store.grants.listAuthorizedApps(userId), ctx.store.settings.exportSettings(userId), ctx.store.mfa.listPasskeys(userId)])
    return {
      apps: [...new Set(apps.map((a) => a.name))],
      settings: settings.reduce((n, app) => n + app.settings.length, 0),
      passkeys: passkeys.length,
    }
  }

  /** The confirmation page of "Delete my account", again with a refusal when there is one. */
  async function deletePage(request: Request, session: Session, refused?: { status: number; error: () => string }): Promise<Response> {
    const account = await ctx.store.users.findUserByEmail(session.user.email)
    const hasPassword = !!account?.passwordHash
    const stale = !hasPassword && ctx.clock.now() - session.authTime > REAUTH_AFTER_MS
    const signInAgain = stale ? `${loginUrl('/account/delete')}&reauth=1` : undefined
    const csrf = formCsrf(ctx, request, session).token
    const contents = await contentsOf(session.user.id)
    const page = () => <DeleteAccountPage csrf={csrf} contents={contents} hasPassword={hasPassword} signInAgain={signInAgain} error={refused?.error()} />
    return htmlPage(page, { status: refused?.status, speech: speechOf(ctx.config, request, { user: session.user }) })
  }

  return new Elysia({ name: 'account-profile' })
    .post(
      '/account/profile',
      async function saveProfile({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const avatar = (body.avatar_url ?? '').trim()
        try {
          // Both are checked before either is written: a refused picture leaves the name as it was too.
          await updateProfile(ctx, session.user.id, { fullName: body.full_name ?? '', avatarUrl: avatar === '' ? null : avatar })
        } catch (error) {
          if (error instanceof UserInputError) return accountPage(ctx, request, session, { status: 400, error: () => sayError(error) })
          throw error
        }
        await ctx.audit.record('user.updated', { userId: session.user.id, request, detail: { actor: session.user.id, profile: true } })
        return seeOther('/account')
      },
      { parse: parsePageForm, body: ProfileForm },
    )
    .post(
      '/account/password/change',
      async function changePassword({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const account = await ctx.store.users.findUserByEmail(session.user.email)
        if (!account?.passwordHash) return accountPage(ctx, request, session, { status: 409, error: () => msg('account.noPasswordYet') })
        let password: string
        try {
          password = checkPassword(body.new_password ?? '')
        } catch (error) {
          if (error instanceof UserInputError) return accountPage(ctx, request, session, { status: 400, error: () => sayError(error, 'theNew') })
          throw error
        }
        const guess = await passwordGuess(request, session, body.current_password ?? '')
        if (typeof guess === 'object') return accountPage(ctx, request, session, { status: 429, error: () => msg('account.tooMany', { count: guess.wait }) })
        if (guess === 'wrong') return accountPage(ctx, request, session, { status: 401, error: () => msg('account.wrongPassword') })
        await ctx.store.mfa.setPassword(session.user.id, await hashPassword(password))
        // A changed password ends every other sign-in; this browser stays signed in.
        await deleteSessionsOf(ctx.store, session.user.id, session)
        await notify(ctx.config, ctx.store, passwordChangedMessage(recipient(ctx.config, session.user)), ctx.clock.now())
        await ctx.audit.record('password.changed', { userId: session.user.id, request, detail: { via: 'change' } })
        return accountPage(ctx, request, session, undefined, () => msg('account.passwordChanged'))
      },
      { parse: parsePageForm, body: ChangePasswordForm },
    )
    .get('/account/delete', async function showDeleteAccount({ request }) {
      const session = await readSession(ctx, request)
      if (!session) return seeOther(loginUrl('/account/delete'))
      return deletePage(request, session)
    })
    .post(
      '/account/delete',
      async function deleteAccount({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const account = await ctx.store.users.findUserByEmail(session.user.email)
        if (account?.passwordHash) {
          const guess = await passwordGuess(request, session, body.password ?? '')
          if (typeof guess === 'object') return deletePage(request, session, { status: 429, error: () => msg('account.tooMany', { count: guess.wait }) })
          if (guess === 'wrong') return deletePage(request, session, { status: 401, error: () => msg('deleteAccount.wrongPassword') })
        } else if (ctx.clock.now() - session.authTime > REAUTH_AFTER_MS) {
          return deletePage(request, session, { status: 401, error: () => msg('deleteAccount.reauth') })
        }
        // Under a lock on every enabled admin's row: the last one cannot leave nobody to administer.
        const outcome = await ctx.store.users.changeKeepingAnAdmin(session.user.id, 'delete', ctx.clock.now())
        if (outcome === 'last-admin')
          return deletePage(request, session, { status: 409, error: () => msg('deleteAccount.lastAdmin') })
        if (outcome === 'done') {
          await notify(ctx.config, ctx.store, accountDeletedMessage(recipient(ctx.config, session.user)), ctx.clock.now())
          await ctx.audit.record('user.deleted', { userId: session.user.id, request, detail: { actor: session.user.id } })
        }
        const page = () => <NoticePage title={msg('deleteAccount.doneTitle')} message={msg('deleteAccount.done')} link={{ href: '/login', label: msg('deleteAccount.another') }} />
        return htmlPage(page, { cookies: [clearCookie(cookieNames(secure).session, secure)], speech: speechOf(ctx.config, request, { user: session.user }) })
      },
      { parse: parsePageForm, body: DeleteAccountForm },
    )
}
