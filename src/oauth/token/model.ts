import { t } from 'elysia'

/** RFC 6749 §4.1.3 and §6, plus client_secret_post and PKCE; other parameters are ignored (§3.2). */
export const TokenRequest = t.Object(
  {
    grant_type: t.String({ description: 'authorization_code, refresh_token or client_credentials' }),
    code: t.Optional(t.String()),
    redirect_uri: t.Optional(t.String()),
    client_id: t.Optional(t.String()),
    client_secret: t.Optional(t.String()),
    code_verifier: t.Optional(t.String()),
    refresh_token: t.Optional(t.String()),
    device_code: t.Optional(t.String({ description: 'RFC 8628: the device code being polled' })),
    scope: t.Optional(t.String()),
    resource: t.Optional(t.Union([t.String(), t.Array(t.String())], { description: 'RFC 8707: the resource the authorization was for (with or without a trailing slash)' })),
  },
  { additionalProperties: true },
)
export type TokenRequest = typeof TokenRequest.static

export const TokenResponse = t.Object({
  access_token: t.String(),
  token_type: t.Literal('Bearer'),
  expires_in: t.Integer(),
  refresh_token: t.Optional(t.String({ description: 'not for client_credentials (RFC 6749 §4.4.3)' })),
  scope: t.String(),
  id_token: t.Optional(t.String({ description: 'with scope openid: an RS256 OpenID Connect ID token' })),
})
export type TokenResponse = typeof TokenResponse.static
