import { Elysia, t } from 'elysia'
import { avatarUrlOf } from '../accounts/avatar'
import type { AppContext } from '../context'
import { json } from '../lib/http'
import { errorResponses } from '../docs/openapi'
import { authenticateBearer } from './bearer'
import type { UserGrant } from './tokens'
import { groupsClaim, identityClaims } from '../oidc/id-token'

export const UserInfo = t.Object({
  id: t.String({ format: 'uuid' }),
  email: t.Optional(t.String()),
  full_name: t.Optional(t.String()),
  avatar_url: t.Optional(t.String({ format: 'uri' })),
  sub: t.Optional(t.String({ description: 'with openid: the user id' })),
  email_verified: t.Optional(t.Boolean({ description: 'with openid and email' })),
  name: t.Optional(t.String({ description: 'with openid and profile' })),
  picture: t.Optional(t.String({ format: 'uri', description: 'with openid and profile' })),
  groups: t.Optional(t.Array(t.String(), { description: 'with groups: the names of the user’s groups' })),
})

export function userinfoRoutes(ctx: AppContext) {
  /**
   * Keys outside the granted scopes are absent, not null (SPEC). With openid, OpenID Connect's
   * standard claims join the seed's own (Core §5.3): sub, and per scope email_verified, name, picture.
   */
  function answer({ user, scopes }: UserGrant): Response | Promise<Response> {
    const body: typeof UserInfo.static = { id: user.id }
    if (scopes.includes('email')) body.email = user.email
    if (scopes.includes('profile')) {
      body.full_name = user.fullName
      body.avatar_url = avatarUrlOf(ctx.config, user)
    }
    const answer = scopes.includes('openid') ? { ...body, ...identityClaims(ctx, user, scopes) } : body
    // Scope groups reads the user's groups: only then is there a second lookup.
    return scopes.includes('groups') ? groupsClaim(ctx, user.id, scopes).then((groups) => json({ ...answer, ...groups })) : json(answer)
  }

  return new Elysia({ name: 'oauth-userinfo' }).get(
    '/api/oauth/userinfo',
    async function userinfo({ request }) {
      return answer(await authenticateBearer(ctx, request, undefined, undefined, true))
    },
    {
      response: { 200: UserInfo, ...errorResponses(401) },
      detail: { tags: ['OAuth'], summary: 'The signed-in user: id always, email with scope email, full_name and avatar_url with scope profile', security: [{ bearer: [] }] },
    },
  )
}
