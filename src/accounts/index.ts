import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { authenticateBearer } from '../oauth/bearer'
import { clearCookie } from '../lib/cookies'
import { PageError } from '../lib/errors'
import { revokeAccess } from '../oauth/consents'
import { seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { avatarSvg } from './avatar'
import { avatarRoutes, uploadedAvatar } from './avatar-routes'
import { CsrfForm, RevokeForm } from './model'
import { cookieNames, deleteSessionsOf } from './sessions'
import { dataRoutes } from './data'
import { emailRoutes } from './email'
import { emailChangeRoutes } from './email-change'
import { secondFactorRoutes } from './second-factor'
import { profileRoutes } from './profile'
import { signInExitRoutes } from './sign-in-exits'
import { sessionRoutes } from './sessions-page'
import { accountLanguageRoutes } from './language'
import { accountPage, securityRoutes } from './security'
import { forbidden, signInRoutes } from './sign-in'
import { csrfAccepted, loginUrl, readSession } from './web'

/** A signed-in session, or a valid bearer token with `profile` (RFC 6750's check, as the API makes it). */
function avatarViewer(ctx: AppContext) {
  return async function mayViewAvatars(request: Request): Promise<boolean> {
    if (!request.headers.has('authorization')) return (await readSession(ctx, request)) !== undefined
    try {
      await authenticateBearer(ctx, request, 'profile')
      return true
    } catch {
      return false
    }
  }
}

/** `<user id>` (an upload) or `<user id>.svg` (the initials). */
const AVATAR_FILE = /^([0-9a-f-]{36})(\.svg)?$/

export function accountRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  const names = cookieNames(secure)

  const mayViewAvatars = avatarViewer(ctx)
  return new Elysia({ name: 'accounts' })
    .use(signInRoutes(ctx))
    .use(secondFactorRoutes(ctx))
    .use(signInExitRoutes(ctx))
    .use(securityRoutes(ctx))
    .use(profileRoutes(ctx))
    .use(avatarRoutes(ctx))
    .use(emailRoutes(ctx))
    .use(emailChangeRoutes(ctx))
    .use(dataRoutes(ctx))
    .use(sessionRoutes(ctx))
    .use(accountLanguageRoutes(ctx))
    .get('/', () => seeOther('/account'))
    .get('/account', async function showAccount({ request }) {
      const session = await readSession(ctx, request)
      if (!session) return seeOther(loginUrl('/account'))
      return accountPage(ctx, request, session)
    })
    .post(
      '/account/revoke',
      async function revokeApp({ request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        await revokeAccess(ctx, session.user.id, body.client_id ?? '', request)
        return seeOther('/account')
      },
      { parse: parsePageForm, body: RevokeForm },
    )
    .post(
      '/account/sign-out-everywhere',
      async function signOutEverywhere({ request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        await deleteSessionsOf(ctx.store, session.user.id)
        return seeOther('/login', [clearCookie(names.session, secure)])
      },
      { parse: parsePageForm, body: CsrfForm },
    )
    .get('/avatars/:file', async function showAvatar({ params, request }) {
      // A name's initials are the user's data: for a signed-in browser, or an app holding a
      // token with `profile` (the scope that hands out avatar_url).
      if (!(await mayViewAvatars(request))) throw new PageError(401, 'error.signInToSee')
      // /avatars/<user id>: an uploaded picture; /avatars/<user id>.svg: the initials. A disabled
      // or deleted user's answer as no picture at all, word for word (no oracle): their userinfo
      // and id_tokens are refused, and so is the picture they name.
      const [, userId, svg] = AVATAR_FILE.exec(params.file) ?? []
      const picture = userId ? await ctx.store.users.findAvatar(userId) : undefined
      if (!svg && picture?.upload) return uploadedAvatar(picture.upload, request)
      if (!svg || !picture) throw new PageError(404, 'error.noPicture')
      return new Response(avatarSvg(userId!, picture.fullName), {
        headers: {
          'content-type': 'image/svg+xml',
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
          'x-content-type-options': 'nosniff',
          'cache-control': 'private, max-age=3600',
          vary: 'Authorization, Cookie',
        },
      })
    })
}
