import { describe, expect, test } from 'bun:test'
import { createProvider } from '../../src/providers/service'
import { addUser, cookieHeader, createTestApp, signIn, type TestApp } from '../helpers'

const get = (t: TestApp, path: string, jar: Record<string, string>) => t.handle(path, { headers: { cookie: cookieHeader(jar) } })
const SECRET = 'provider-secret-never-shown-0123'

describe('/admin/providers', () => {
  test('lists the providers as provider list does, with the callback to register; never a secret; for admins only', async () => {
    const t = await createTestApp()
    const ann = await addUser(t, 'ann@example.com', 'Ann Admin')
    await addUser(t, 'bob@example.com', 'Bob')
    await t.store.users.setAdmin(ann.id, true)
    const jar = await signIn(t, 'ann@example.com')
    const empty = await (await get(t, '/admin/providers', jar)).text()
    expect(empty).toContain('<strong>Sign-in providers</strong>')
    expect(empty).toContain('No providers: people sign in with a password or a passkey only.')
    await createProvider(t.store, t.ctx.sealKey, { name: 'Acme <SSO>', issuer: 'https://sso.acme.example', clientId: 'latchkey', clientSecret: SECRET, allowCreate: true, allowedDomains: ['acme.example'] }, [], t.clock.now())
    const res = await get(t, '/admin/providers', jar)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<td data-label="Name">Acme &lt;SSO&gt;</td>')
    expect(html).toContain('<code>https://sso.acme.example</code>')
    expect(html).toContain('<td data-label="Domains">acme.example</td>')
    expect(html).toContain('<code>http://localhost:3000/login/provider/acme-sso/callback</code>')
    expect(html).not.toContain(SECRET)
    expect(html).not.toContain('<script')
    expect((await get(t, '/admin/providers', await signIn(t, 'bob@example.com'))).status).toBe(404)
  })
})
