import { describe, expect, test } from 'bun:test'
import { createProvider } from '../../src/providers/service'
import { REAUTH_AFTER_MS } from '../../src/admin/web'
import { PASSWORD, addUser, cookieHeader, cookiesFrom, createTestApp, csrfFrom, postForm, signIn, type TestApp } from '../helpers'

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

  test('delete asks first, naming in numbers who is connected and who will have to reset their password by email; confirmed, the provider and its identities go, the accounts stay', async () => {
    const t = await createTestApp()
    const ann = await addUser(t, 'ann@example.com', 'Ann Admin')
    await t.store.users.setAdmin(ann.id, true)
    const jar = await signIn(t, 'ann@example.com')
    const now = t.clock.now()
    await createProvider(t.store, t.ctx.sealKey, { name: 'Acme', issuer: 'https://sso.acme.example', clientId: 'latchkey', clientSecret: SECRET }, [], now)
    await createProvider(t.store, t.ctx.sealKey, { name: 'Corp', issuer: 'https://sso.corp.example', clientId: 'latchkey', clientSecret: SECRET }, [], now)
    const origin = { kind: 'oidc' as const, issuer: 'https://sso.acme.example', apiUrl: null }
    // Ann has a password; Bob and Cat signed up through Acme; Cat has since added a passkey, Bob nothing.
    expect(await t.store.providers.linkIdentity({ providerId: 'acme', subject: 'ann', userId: ann.id, email: null, origin }, now)).toBe('linked')
    for (const id of ['bob', 'cat']) await t.store.providers.createWithIdentity({ id, email: `${id}@example.com`, fullName: id, avatarUrl: null, emailVerified: true, passwordHash: '' }, { providerId: 'acme', subject: id, email: null, origin }, now)
    await t.store.mfa.addPasskey({ credentialId: 'c1', userId: 'cat', name: 'Laptop', publicKey: 'pk', signCount: 0, transports: [], createdAt: now, lastUsedAt: null })

    const list = await (await get(t, '/admin/providers', jar)).text()
    expect(list).toContain('<form method="post" action="/admin/providers/delete" class="inline">')
    expect(list).toContain('<input type="hidden" name="id" value="acme"/><button type="submit" class="danger">Delete</button>')
    const csrf_token = csrfFrom(list)
    const asked = await postForm(t, '/admin/providers/delete', { csrf_token, id: 'acme' }, jar)
    expect(asked.status).toBe(200)
    const html = await asked.text()
    expect(html).toContain('<p class="confirm"><strong>Delete the sign-in provider Acme: 3 people are connected through it</strong></p>')
    expect(html).toContain(
      '<ul><li>1 of them has no password or passkey and will have to reset their password by email to sign in again.</li><li>Their connected accounts are removed with it; their accounts here stay.</li><li>This cannot be undone.</li></ul>',
    )
    expect(html).toContain('<button type="submit" class="danger">Delete Acme</button>')
    expect(html).toContain('<a href="/admin/providers">Cancel</a>')
    expect((await t.store.providers.listProviders()).map((p) => p.id)).toEqual(['acme', 'corp'])

    // In Polish, two of them ("few"): Cat's passkey is gone (by hand: /account keeps the last one).
    await t.rows('DELETE FROM passkeys WHERE credential_id = ?', 'c1')
    const polish = await t.handle('/admin/providers/delete', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'pl', cookie: cookieHeader(jar) }, body: new URLSearchParams({ csrf_token, id: 'acme' }).toString() })
    const polishHtml = await polish.text()
    expect(polishHtml).toContain('<strong>Usuń dostawcę logowania Acme: 3 osoby mają połączone z nim konta</strong>')
    expect(polishHtml).toContain('<li>2 z nich nie mają hasła ani klucza dostępu i aby znów się zalogować, muszą ustawić nowe hasło przez e-mail.</li>')

    // Nobody connected: no one to name.
    const corp = await (await postForm(t, '/admin/providers/delete', { csrf_token, id: 'corp' }, jar)).text()
    expect(corp).toContain('<strong>Delete the sign-in provider Corp: 0 people are connected through it</strong></p><ul><li>Their connected accounts are removed with it; their accounts here stay.</li>')

    const done = await postForm(t, '/admin/providers/delete', { csrf_token: csrfFrom(html), id: 'acme', confirmed: 'yes' }, jar)
    expect([done.status, done.headers.get('location')]).toEqual([303, '/admin/providers'])
    expect((await t.store.providers.listProviders()).map((p) => p.id)).toEqual(['corp'])
    expect([await t.store.providers.listIdentities('bob'), (await t.store.users.findUser('bob'))?.email]).toEqual([[], 'bob@example.com'])
    expect(await (await get(t, '/admin/providers', cookiesFrom(done, { ...jar }))).text()).toContain('<p class="notice" role="status">Deleted Acme.</p>')
    await t.ctx.audit.flush()
    const events = (await t.store.audit.list({ limit: 10 })).filter((e) => e.kind === 'provider.deleted')
    expect(events.map((e) => JSON.parse(e.detail!))).toEqual([{ actor: ann.id, provider: 'acme', connected: 3, no_other_way_in: 2 }])

    const gone = await postForm(t, '/admin/providers/delete', { csrf_token, id: 'acme' }, jar)
    expect(gone.status).toBe(404)
    expect(await gone.text()).toContain('There is no such sign-in provider.')
    // Without the page's CSRF token nothing is asked or done.
    expect((await postForm(t, '/admin/providers/delete', { id: 'corp', confirmed: 'yes' }, jar)).status).toBe(403)
    expect((await t.store.providers.listProviders()).map((p) => p.id)).toEqual(['corp'])

    // After 15 minutes the confirmed deletion asks for the password again, and only then happens.
    t.clock.advance(REAUTH_AFTER_MS + 1000)
    const stale = await postForm(t, '/admin/providers/delete', { csrf_token, id: 'corp', confirmed: 'yes' }, jar)
    expect([stale.status, (await stale.text()).includes('name="confirm_password"')]).toEqual([200, true])
    expect((await t.store.providers.listProviders()).map((p) => p.id)).toEqual(['corp'])
    expect((await postForm(t, '/admin/providers/delete', { csrf_token, id: 'corp', confirmed: 'yes', confirm_password: PASSWORD }, jar)).status).toBe(303)
    expect(await t.store.providers.listProviders()).toEqual([])
  })
})
