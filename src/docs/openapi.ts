import type { AnyElysia } from 'elysia'
import { t } from 'elysia'
import pkg from '../../package.json'
import type { Config } from '../config'

/** What every `/api` error answers (RFC 6749 §5.2 names). */
export const ErrorBody = t.Object(
  { error: t.String({ examples: ['invalid_request'] }), error_description: t.String() },
  { description: 'An error' },
)

export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorBody]))

const NOT_API = ['/', '/login', '/signup', '/logout', '/account', '/account/revoke', '/account/sign-out-everywhere', '/oauth/logout', '/avatars/:file', '/assets/app.css', '/assets/webauthn.js', '/assets/passkeys.js', '/favicon.svg', '/favicon.ico', '/login/passkey', '/login/passkey/options', '/login/two-step', '/account/passkeys', '/account/passkeys/options', '/account/passkeys/rename', '/account/passkeys/remove', '/account/two-step', '/account/two-step/setup', '/account/two-step/confirm', '/account/two-step/recovery-codes', '/account/two-step/disable', '/account/password', '/account/password/remove', '/forgot-password', '/reset-password', '/verify-email', '/verify-email/resend', '/check-email', '/confirm-email', '/account/email', '/account/data', '/account/data/delete', '/docs', '/openapi.json', '/account/profile', '/account/password/change', '/account/delete', '/login/two-step/cancel', '/login/switch', '/assets/copy.js', '/setup', '/assets/brand/logo', '/assets/brand/logo-dark', '/assets/brand/favicon', '/assets/brand.css', '/assets/apps/:id/logo', '/login/provider/:id', '/login/provider/:id/callback', '/account/providers/:id/connect', '/account/providers/:id/disconnect']

/**
 * The OpenAPI document of the JSON API, generated from the route schemas by @elysiajs/openapi.
 * The generator is imported on the first request, not at start-up: it is a large module, and
 * loading it costs every server memory and start-up time for a page few ever open.
 */
export async function buildOpenApiDocument(app: AnyElysia, config: Config) {
  const { toOpenAPISchema } = await import('@elysiajs/openapi')
  // /admin is pages for people, and says nothing of itself to strangers.
  const admin = app.routes.map((r: { path: string }) => r.path).filter((p: string) => p === '/admin' || p.startsWith('/admin/'))
  const { paths, components } = toOpenAPISchema(app, { methods: ['OPTIONS'], paths: [...NOT_API, ...admin] }, undefined, undefined, '3.0.3')
  return {
    openapi: '3.0.3',
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
    paths,
    components: {
      ...components,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An access token from /api/oauth/token' },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_secret_basic' },
      },
    },
  }
}
