import { Elysia } from 'elysia'
import type { Config } from '../config'
import type { AppContext } from '../context'
import { json } from '../lib/http'
import { SUPPORTED_SCOPES } from './scopes'
import { ASSERTION_ALGS } from './token/client-assertion'

/** The endpoints OAuth metadata (RFC 8414) and OpenID Connect discovery share. */
export function endpoints(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/api/oauth/token`,
    userinfo_endpoint: `${issuer}/api/oauth/userinfo`,
    revocation_endpoint: `${issuer}/api/oauth/revoke`,
    introspection_endpoint: `${issuer}/api/oauth/introspect`,
    end_session_endpoint: `${issuer}/oauth/logout`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    pushed_authorization_request_endpoint: `${issuer}/api/oauth/par`,
    device_authorization_endpoint: `${issuer}/api/oauth/device_authorization`,
    // Per client (`--require-par`, the client's require_pushed_authorization_requests), not server-wide.
    require_pushed_authorization_requests: false,
  }
}

/** The grants both metadata documents list (SPEC, Machines and devices). */
export const GRANT_TYPES_SUPPORTED = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']

/** How clients authenticate at each endpoint (both metadata documents): private_key_jwt with asymmetric algorithms only (RFC 7523). */
export const CLIENT_AUTH_METADATA = {
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
  token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
  revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
  introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
}

/** What clients Latchkey has never met can use (both metadata documents carry it): RFC 7591 registration, client ID metadata documents. */
export function agentMetadata(config: Config) {
  return {
    ...(config.dynamicRegistration === 'off' ? {} : { registration_endpoint: `${config.issuer}/api/oauth/register` }),
    client_id_metadata_document_supported: config.clientIdMetadataDocuments,
  }
}

/** RFC 8414 §2 authorization server metadata. */
export function metadataRoutes(ctx: AppContext) {
  const issuer = ctx.config.issuer
  const metadata = {
    ...endpoints(issuer),
    scopes_supported: SUPPORTED_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: GRANT_TYPES_SUPPORTED,
    ...CLIENT_AUTH_METADATA,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    ...agentMetadata(ctx.config),
  }
  // RFC 9728: Latchkey's own API (userinfo, settings) as a protected resource.
  const resource = { resource: `${issuer}/api`, authorization_servers: [issuer], scopes_supported: ['settings:read', 'settings:write'], bearer_methods_supported: ['header'] }
  const cached = { 'cache-control': 'public, max-age=300' }
  const resourceDetail = { detail: { tags: ['OAuth'], summary: 'Protected resource metadata of the API (RFC 9728)' } }
  return new Elysia({ name: 'oauth-metadata' })
    .get('/.well-known/oauth-authorization-server', () => json(metadata, 200, cached), {
      detail: { tags: ['OAuth'], summary: 'Authorization server metadata (RFC 8414)' },
    })
    .get('/.well-known/oauth-protected-resource', () => json(resource, 200, cached), resourceDetail)
    // RFC 9728 §3.1: for the resource ISSUER/api, the well-known URL with the resource's path appended.
    .get('/.well-known/oauth-protected-resource/api', () => json(resource, 200, cached), resourceDetail)
}
