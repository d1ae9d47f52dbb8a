import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { json } from '../lib/http'
import { agentMetadata, CLIENT_AUTH_METADATA, endpoints, GRANT_TYPES_SUPPORTED } from '../oauth/metadata'
import { SUPPORTED_SCOPES } from '../oauth/scopes'
import { ID_TOKEN_ALGS } from '../oauth/clients'
import { JWKS_MAX_AGE } from './keys'
import { LOCALES } from '../i18n/locales'


// The JWKS may be cached, for less than a retired key stays published (ACCESS_TOKEN_TTL, one hour
// by default), so a verifier always meets the key that signed a live token.

/**
 * OpenID Connect Discovery 1.0 (`/.well-known/openid-configuration`) and the JWKS of the
 * ID-token signing keys.
 */
export function discoveryRoutes(ctx: AppContext) {
  const issuer = ctx.config.issuer
  const configuration = {
    ...endpoints(issuer),
    scopes_supported: SUPPORTED_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: GRANT_TYPES_SUPPORTED,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ID_TOKEN_ALGS,
    ...CLIENT_AUTH_METADATA,
    code_challenge_methods_supported: ['S256'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'amr', 'nonce', 'email', 'email_verified', 'name', 'picture', 'groups', 'sid'],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    // SPEC "Brand and language": the languages pages speak, for an app's ui_locales (OpenID Connect Discovery §3).
    ui_locales_supported: LOCALES,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    // OpenID Connect Back-Channel Logout 1.0 §2.1: logout tokens carry `sid`, and id_tokens do too.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    ...agentMetadata(ctx.config),
  }
  return new Elysia({ name: 'oidc-discovery' })
    .get('/.well-known/openid-configuration', () => json(configuration, 200, { 'cache-control': 'public, max-age=300' }), {
      detail: { tags: ['OpenID Connect'], summary: 'OpenID Connect Discovery 1.0' },
    })
    .get(
      '/.well-known/jwks.json',
      async function jwks() {
        return json({ keys: await ctx.signingKeys.published() }, 200, { 'cache-control': `public, max-age=${JWKS_MAX_AGE}` })
      },
      { detail: { tags: ['OpenID Connect'], summary: 'The RS256 public keys ID tokens are signed with (current, and retired ones still in use)' } },
    )
}
