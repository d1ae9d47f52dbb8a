/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import { clearCookie } from '../lib/cookies'
import { hashPassword } from '../lib/crypto'
import { json } from '../lib/http'
import { accountDeletedMessage, notify, passwordChangedMessage, recipient } from '../mail/messages'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { isUploadedAvatar } from './avatar'
import { NoticePage } from './email-pages'
import { DeleteAccountPage, type AccountContents } from './profile-pages'
import { accountPage } from './security'
import { cookieNames, deleteSessionsOf, type Session } from './sessions'
import { forbidden } from './sign-in'
import { UserInputError, checkPassword, updateProfile } from './users'
import { csrfAccepted, formCsrf, loginUrl, readSession } from './web'
import { accountProof, signInProofOf } from './confirm'
import { CsrfForm } from './model'
import { PasskeyRefused, confirmOptions } from './passkeys'
import { t as msg } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

const NO_STORE = { 'cache-control': 'no-store' }

// Every field optional: a form without its CSRF token is answered 403 by the handler, not 400.
const ProfileForm = t.Object({ csrf_token: t.Optional(t.String()), full_name: t.Optional(t.String()), avatar_url: t.Optional(t.String()) })
const ChangePasswordForm = t.Object({
  csrf_token: t.Optional(t.String()),
  current_password: t.Optional(t.String()),
  credential: t.Optional(t.String()),
  new_password: t.Optional(t.String()),
})
const DeleteAccountForm = t.Object({ csrf_token: t.Optional(t.String()), password: t.Optional(t.String()), credential: t.Optional(t.String()) })

// What a refused proof says, per form (words of the page's language, said when it renders).
const CHANGE_WORDS = { wrongPassword: () => msg('account.wrongPassword'), nothing: () => msg('confirm.nothingChanged') }
const DELETE_WORDS = { wrongPassword: () => msg('deleteAccount.wrongPassword'), nothing: () => msg('confirm.nothingDeleted') }

/**
 * SPEC "Your account and your sessions", Profile: the name and picture, "Change password" (the
 * current one or a fresh passkey first — confirm.ts; the other sessions end) and "Delete my
 * account" (the password or a fresh passkey again; everything of the user goes in one write,
 * and their tokens stop at once).
 */
export function profileRoutes(ctx: AppContext) {
  const prove = accountProof(ctx)
  const secure = ctx.config.secureCookies

  /** The signed-in session of a form with its CSRF token, or 403. */
  async function signedIn(request: Request, csrfToken: string | undefined): Promise<Session> {
    const session = await readSession(ctx, request)
    if (!session || !csrfAccepted(ctx, request, session, csrfToken)) throw forbidden()
    return session
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
    const csrf = formCsrf(ctx, request, session).token
    const contents = await contentsOf(session.user.id)
    const passkeys = ctx.config.passkeys !== null && contents.passkeys > 0
    const signIn = signInProofOf(ctx, session, { password: !!account?.passwordHash, passkey: passkeys }, '/account/delete')
    const page = () => <DeleteAccountPage csrf={csrf} contents={contents} hasPassword={!!account?.passwordHash} passkeys={passkeys} signIn={signIn} error={refused?.error()} />
    return htmlPage(page, { status: refused?.status, speech: speechOf(ctx.config, request, { user: session.user }) })
  }

  return new Elysia({ name: 'account-profile' })
    .post(
      '/account/profile',
      async function saveProfile({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const avatar = (body.avatar_url ?? '').trim()
        // An address replaces any picture; left empty, it keeps an uploaded one ("Remove picture" removes it).
        const avatarUrl = avatar !== '' ? avatar : isUploadedAvatar(session.user.avatarUrl) ? undefined : null
        try {
          // Both are checked before either is written: a refused picture leaves the name as it was too.
          await updateProfile(ctx, session.user.id, { fullName: body.full_name ?? '', avatarUrl })
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
        let password: string
        try {
          password = checkPassword(body.new_password ?? '')
        } catch (error) {
          if (error instanceof UserInputError) return accountPage(ctx, request, session, { status: 400, error: () => sayError(error, 'theNew') })
          throw error
        }
        // The current password, or a fresh passkey (the only way for an account without a password).
        const refused = await prove(request, session, { password: body.current_password, credential: body.credential }, CHANGE_WORDS)
        if (refused) return accountPage(ctx, request, session, refused)
        await ctx.store.mfa.setPassword(session.user.id, await hashPassword(password))
        // A changed password ends every other sign-in; this browser stays signed in.
        await deleteSessionsOf(ctx.store, session.user.id, session)
        await notify(ctx.config, ctx.store, passwordChangedMessage(recipient(ctx.config, session.user)), ctx.clock.now())
        await ctx.audit.record('password.changed', { userId: session.user.id, request, detail: { via: 'change' } })
        return accountPage(ctx, request, session, undefined, () => msg('account.passwordChanged'))
      },
      { parse: parsePageForm, body: ChangePasswordForm },
    )
    .post(
      '/account/passkeys/confirm-options',
      async function confirmOptionsOf({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        if (!ctx.config.passkeys) throw forbidden()
        try {
          return json(await confirmOptions(ctx, session.user, session.token), 200, NO_STORE)
        } catch (error) {
          if (!(error instanceof PasskeyRefused)) throw error
          return json({ error: 'no_passkey', error_description: error.message }, 409, NO_STORE)
        }
      },
      { parse: parsePageForm, body: CsrfForm, detail: { hide: true } },
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
        const refused = await prove(request, session, { password: body.password, credential: body.credential }, DELETE_WORDS)
        if (refused) return deletePage(request, session, refused)
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
