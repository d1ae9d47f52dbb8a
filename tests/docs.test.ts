import { describe, expect, test } from 'bun:test'
import pkg from '../package.json'
import { createTestApp } from './helpers'

describe('API documentation', () => {
  test('/openapi.json is an OpenAPI 3 document of the JSON API, generated from the route schemas', async () => {
    const res = await (await createTestApp()).handle('/openapi.json')
    expect(res.status).toBe(200)
    const doc = (await res.json()) as any
    expect(doc.openapi).toStartWith('3.')
    expect(doc.info).toMatchObject({ title: 'Latchkey', version: pkg.version })
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/authz/auth-request', '/api/authz/forward-auth', '/api/oauth/device_authorization', '/api/oauth/introspect', '/api/oauth/par', '/api/oauth/revoke', '/api/oauth/token', '/api/oauth/userinfo', '/api/settings', '/api/settings-events', '/api/settings-events/ticket', '/api/settings/{key}', '/healthz', '/oauth/authorize'])
    expect(Object.keys(doc.paths['/api/settings'])).toEqual(['get', 'post'])
    expect(doc.paths['/api/settings'].post.requestBody.content['application/json'].schema.required).toEqual(['client_id', 'key', 'value'])
    expect(Object.keys(doc.paths['/api/oauth/token'].post.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded'])
    expect(Object.keys(doc.paths['/api/settings'].post.responses).sort()).toEqual(['200', '400', '401', '403', '409', '412', '413'])
    expect(doc.paths['/api/oauth/userinfo'].get.security).toEqual([{ bearer: [] }])
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    // Pages and the consent form are not part of the JSON API.
    expect(doc.paths['/login']).toBeUndefined()
    expect(doc.paths['/oauth/authorize'].post).toBeUndefined()
  })

  test('/docs is a readable reference page with no scripts', async () => {
    const res = await (await createTestApp()).handle('/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await res.text()
    expect(html).toContain('<code>POST /api/settings</code>')
    expect(html).toContain('<code>DELETE /api/settings/{key}</code>')
    expect(html).not.toContain('<script')
  })
})
