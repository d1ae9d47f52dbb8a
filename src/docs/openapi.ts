import { openapi } from '@elysiajs/openapi'
import { t } from 'elysia'
import pkg from '../../package.json'
import type { Config } from '../config'

/** What every `/api` error answers (RFC 6749 §5.2 names). */
export const ErrorBody = t.Object(
  { error: t.String({ examples: ['invalid_request'] }), error_description: t.String() },
  { description: 'An error' },
)

export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorBody]))

/** The OpenAPI document of the JSON API at /openapi.json, generated from the route schemas. */
export function apiDocumentation(config: Config) {
  return openapi({
    provider: null,
    specPath: '/openapi.json',
    exclude: {
      methods: ['OPTIONS'],
      paths: ['/', '/login', '/signup', '/logout', '/account', '/account/revoke', '/avatars/:file', '/assets/app.css', '/docs', '/openapi.json'],
    },
    documentation: {
      info: {
        title: 'Latchkey',
        version: pkg.version,
        description: 'OAuth 2.0 authorization server (authorization code + PKCE) with a per-user, per-application settings store.',
      },
      servers: [{ url: config.issuer }],
      tags: [
        { name: 'OAuth', description: 'Authorization code flow (RFC 6749, 7636, 8414, 9207)' },
        { name: 'Settings', description: 'Per-user, per-application key/value settings' },
        { name: 'Operations', description: 'Health' },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token from /api/oauth/token' },
          clientBasic: { type: 'http', scheme: 'basic', description: 'client_secret_basic' },
        },
      },
    },
  })
}
