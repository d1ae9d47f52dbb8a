import { Elysia, t } from 'elysia'
import { avatarUrlOf } from '../accounts/avatar'
import type { AppContext } from '../context'
import { json } from '../lib/http'
import { errorResponses } from '../docs/openapi'
import { authenticateBearer } from './bearer'
import type { TokenGrant } from './tokens'

export const UserInfo = t.Object({
  id: t.String({ format: 'uuid' }),
  email: t.Optional(t.String()),
  full_name: t.Optional(t.String()),
  avatar_url: t.Optional(t.String({ format: 'uri' })),
})

export function userinfoRoutes(ctx: AppContext) {
  /** Keys outside the granted scopes are absent, not null (SPEC). */
  function answer({ user, scopes }: TokenGrant): Response {
    const body: typeof UserInfo.static = { id: user.id }
    if (scopes.includes('email')) body.email = user.email
    if (scopes.includes('profile')) {
      body.full_name = user.fullName
      body.avatar_url = avatarUrlOf(ctx.config, user)
    }
    return json(body)
  }

  return new Elysia({ name: 'oauth-userinfo' }).get(
    '/api/oauth/userinfo',
    async function userinfo({ request }) {
      return answer(await authenticateBearer(ctx, request))
    },
    {
      response: { 200: UserInfo, ...errorResponses(401) },
      detail: { tags: ['OAuth'], summary: 'The signed-in user: id always, email with scope email, full_name and avatar_url with scope profile', security: [{ bearer: [] }] },
    },
  )
}
