import { describe, expect, test } from 'bun:test'
import { REAUTH_AFTER_MS } from '../../src/admin/web'
import { turnOnTotp } from '../accounts/mfa-flows'
import { CALLBACK, addClient, addUser, bearer, cookieHeader, cookiesFrom, createTestApp, csrfFrom, mintToken, postForm, signIn, type TestApp } from '../helpers'

type Jar = Record<string, string>

/** Ann (admin, signed in), Bob with two apps' consents and three settings, an app "Grafana", a group and a resource. */
async function world() {
  const t = await createTestApp()
  const ann = await addUser(t, 'ann@example.com', 'Ann Admin')
  const bob = await addUser(t, 'carol@example.com', 'Carol Member')
  await t.store.users.setAdmin(ann.id, true)
  const grafana = await addClient(t, { name: 'Grafana' })
  const wiki = await addClient(t, { name: 'Wiki' })
  for (const [client, keys] of [
    [grafana, ['theme', 'tz']],
    [wiki, ['lang']],
  ] as const) {
    await t.rows('INSERT INTO consents (user_id, client_id, scope, created_at, updated_at, resource) VALUES (?, ?, ?, ?, ?, ?)', bob.id, client.client.id, 'settings:read settings:write', 0, 0, '')
    const token = await mintToken(t, client.client.id, bob.id)
    for (const key of keys) {
      const saved = await t.handle('/api/settings', { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ client_id: client.client.id, key, value: 1 }) })
      expect(saved.status).toBe(200)
    }
  }
  await t.store.groups.createGroup('family', t.clock.now())
  await t.store.groups.addMember('family', bob.id)
  await t.store.resources.insertResource({ uri: 'https://mcp.example.com', name: 'Tools', scopes: { 'tools:read': 'Read tools' }, tokenFormat: 'opaque', introspectors: [] }, t.clock.now())
  const jar = await signIn(t, 'ann@example.com')
  return { t, ann, bob, grafana, wiki, jar }
}

const get = (t: TestApp, path: string, jar: Jar) => t.handle(path, { headers: { cookie: cookieHeader(jar) } })

async function post(t: TestApp, jar: Jar, page: string, action: string, fields: Record<string, string>) {
  const csrf = csrfFrom(await (await get(t, page, jar)).text())
  return postForm(t, action, { csrf_token: csrf, ...fields }, jar)
}

/** Everything an admin action could change, read straight from the database. */
async function snapshot(t: TestApp) {
  const tables = ['users', 'clients', 'consents', 'settings', 'groups', 'group_members', 'resources', 'sessions', 'signing_keys', 'access_tokens', 'totp_secrets']
  const out: Record<string, unknown> = {}
  for (const table of tables) out[table] = await t.rows(`SELECT * FROM ${table} ORDER BY 1, 2`)
  return JSON.stringify(out)
}

/** The notice a page shows, if any. */
const noticeOf = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1]

describe('/admin confirmations (SPEC "/admin")', () => {
  test('each destructive action first shows a page naming what will happen, and changes nothing; its button does it and ends on a notice', async () => {
    const { t, bob, grafana, jar } = await world()
    await signIn(t, 'carol@example.com') // a session for "sign out everywhere" to end
    const edit = `/admin/apps/edit?client_id=${grafana.client.id}`
    const cases: Array<{ page: string; action: string; fields: Record<string, string>; summary: string; button: string; notice?: string; back: string }> = [
      { page: '/admin/users', action: '/admin/users/sign-out', fields: { user_id: bob.id }, summary: 'Sign carol@example.com out everywhere: every session of theirs ends, on every device', button: 'Sign out everywhere', notice: 'Signed carol@example.com out everywhere.', back: '/admin/users' },
      { page: edit, action: '/admin/apps/rotate-secret', fields: { client_id: grafana.client.id }, summary: 'Rotate the secret of Grafana: the app stops working until it uses the new secret', button: 'Rotate secret', back: edit },
      { page: '/admin/resources', action: '/admin/resources/delete', fields: { uri: 'https://mcp.example.com' }, summary: 'Delete the resource Tools (https://mcp.example.com): its access and refresh tokens stop working', button: 'Delete Tools', notice: 'Deleted the resource https://mcp.example.com.', back: '/admin/resources' },
      { page: '/admin/groups', action: '/admin/groups/delete', fields: { name: 'family' }, summary: 'Delete the group family: 1 member leaves it', button: 'Delete family', notice: 'Deleted the group family.', back: '/admin/groups' },
      { page: '/admin/keys', action: '/admin/keys/rotate', fields: {}, summary: 'Rotate the signing key: a new key signs ID tokens once relying parties can have fetched it', button: 'Rotate signing key', back: '/admin/keys' },
      { page: edit, action: '/admin/apps/delete', fields: { client_id: grafana.client.id }, summary: 'Delete Grafana: 1 user loses access, 2 settings are deleted', button: 'Delete Grafana', notice: 'Deleted Grafana.', back: edit },
      { page: '/admin/users', action: '/admin/users/delete', fields: { user_id: bob.id }, summary: 'Delete carol@example.com: 1 app loses access, 1 setting is deleted', button: 'Delete carol@example.com', notice: 'Deleted carol@example.com.', back: '/admin/users' },
    ]
    for (const c of cases) {
      const before = await snapshot(t)
      const asked = await post(t, jar, c.page, c.action, c.fields)
      expect(asked.status).toBe(200)
      const html = await asked.text()
      expect(html).toContain(`<p class="confirm"><strong>${c.summary}</strong></p>`)
      expect(html).toContain(`<button type="submit" class="danger">${c.button}</button>`)
      expect(html).toContain('<input type="hidden" name="confirmed" value="yes"/>')
      expect(html).toContain(`<a href="${c.back}">Cancel</a>`)
      expect(html).not.toContain('confirm_password')
      expect(await snapshot(t)).toBe(before)
      // The page's own form does it.
      const done = await postForm(t, c.action, { csrf_token: csrfFrom(html), ...c.fields, confirmed: 'yes' }, jar)
      expect((await snapshot(t)) === before).toBe(false)
      if (c.action === '/admin/apps/rotate-secret') {
        expect(done.status).toBe(200)
        expect(noticeOf(await done.text())).toBe('Rotated the secret of Grafana. Copy the new secret now: it is not shown again.')
        continue
      }
      expect(done.status).toBe(303)
      const landed = await t.handle(done.headers.get('location')!, { headers: { cookie: cookieHeader(cookiesFrom(done, { ...jar })) } })
      const notice = noticeOf(await landed.text())
      if (c.notice) expect(notice).toBe(c.notice)
      else expect(notice).toStartWith('Rotated the signing key: published ')
    }
  })

  test('on an old sign-in the confirmation page also asks for the password; confirming without it, or with a wrong one, changes nothing', async () => {
    const { t, bob, jar } = await world()
    t.clock.advance(REAUTH_AFTER_MS + 1000)
    const before = await snapshot(t)
    const asked = await post(t, jar, '/admin/users', '/admin/users/delete', { user_id: bob.id })
    const html = await asked.text()
    expect(asked.status).toBe(200)
    expect(html).toContain('Delete carol@example.com: 2 apps lose access, 3 settings are deleted')
    expect(html).toContain('name="confirm_password"')
    const csrf = csrfFrom(html)
    expect((await postForm(t, '/admin/users/delete', { csrf_token: csrf, user_id: bob.id, confirmed: 'yes' }, jar)).status).toBe(200)
    expect((await postForm(t, '/admin/users/delete', { csrf_token: csrf, user_id: bob.id, confirmed: 'yes', confirm_password: 'not my password' }, jar)).status).toBe(401)
    // The password without the confirmation is no confirmation either.
    expect((await postForm(t, '/admin/users/delete', { csrf_token: csrf, user_id: bob.id, confirm_password: 'correct horse battery' }, jar)).status).toBe(200)
    expect(await snapshot(t)).toBe(before)
    const done = await postForm(t, '/admin/users/delete', { csrf_token: csrf, user_id: bob.id, confirmed: 'yes', confirm_password: 'correct horse battery' }, jar)
    expect(done.status).toBe(303)
    expect(await t.store.users.findUser(bob.id)).toBeUndefined()
  })

  test('reset two-step asks too; a target that is gone is refused on the section page', async () => {
    const { t, bob, jar } = await world()
    const bobJar = await signIn(t, 'carol@example.com')
    await turnOnTotp(t, bobJar)
    const before = await snapshot(t)
    const asked = await post(t, jar, '/admin/users', '/admin/users/reset-two-step', { user_id: bob.id })
    expect(await asked.text()).toContain('Reset two-step sign-in of carol@example.com: their authenticator app and recovery codes are removed, and their sessions end')
    expect(await snapshot(t)).toBe(before)
    const missing = await post(t, jar, '/admin/users', '/admin/users/delete', { user_id: crypto.randomUUID() })
    expect(missing.status).toBe(404)
    expect(await missing.text()).toContain('There is no such user.')
  })
})

describe('/admin notices', () => {
  test('shown once, as text; a notice cookie not signed for this session shows nothing', async () => {
    const { t, jar } = await world()
    const made = await post(t, jar, '/admin/groups', '/admin/groups', { name: 'friends' })
    expect(made.status).toBe(303)
    const cookie = made.headers.getSetCookie().find((c) => c.startsWith('lk_notice='))!
    expect(cookie).toContain('Max-Age=60')
    expect(cookie).toContain('HttpOnly')
    const withNotice = { ...jar, ...cookiesFrom(made, {}) }
    const shown = await get(t, '/admin/groups', withNotice)
    expect(noticeOf(await shown.text())).toBe('Created the group friends.')
    expect(shown.headers.getSetCookie()).toContain('lk_notice=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0')
    // Another session's notice, or a made-up one, is not shown (and is cleared).
    const other = await signIn(t, 'ann@example.com')
    const foreign = await get(t, '/admin/groups', { ...other, lk_notice: withNotice.lk_notice! })
    expect(noticeOf(await foreign.text())).toBeUndefined()
    const forged = await get(t, '/admin/groups', { ...jar, lk_notice: `${Buffer.from('Your account is locked: call 555').toString('base64url')}.${'A'.repeat(43)}` })
    expect(noticeOf(await forged.text())).toBeUndefined()
    // Names in notices are text, never markup.
    const app = await post(t, jar, '/admin/apps', '/admin/apps', { name: '<img src=x onerror=alert(1)>', redirect_uris: CALLBACK, public: 'true' })
    expect(app.status).toBe(303)
    const page = await (await get(t, app.headers.get('location')!, { ...jar, ...cookiesFrom(app, {}) })).text()
    expect(noticeOf(page)).toBe('Created &lt;img src=x onerror=alert(1)&gt;.')
  })
})

describe('/admin forms keep what was typed when refused', () => {
  test('users, invitations, apps (new and edited), groups, members and resources', async () => {
    const { t, grafana, jar } = await world()
    const before = await snapshot(t)
    const user = await post(t, jar, '/admin/users', '/admin/users', { email: 'not-an-email', full_name: 'Dora Typed', password: 'a long password', admin: 'true' })
    expect(user.status).toBe(400)
    const userHtml = await user.text()
    expect(userHtml).toContain('<input id="email" name="email" type="email" required value="not-an-email"/>')
    expect(userHtml).toContain('<input id="full_name" name="full_name" type="text" required value="Dora Typed"/>')
    expect(userHtml).toContain('<input type="checkbox" name="admin" value="true" id="admin" checked/>')
    // The other form on the page stays empty.
    expect(userHtml).toContain('<input id="invite_email" name="email" type="email" required value=""/>')

    const invite = await post(t, jar, '/admin/users', '/admin/users/invite', { email: 'x@', full_name: 'Eve Typed' })
    expect(invite.status).toBe(400)
    expect(await invite.text()).toContain('<input id="invite_full_name" name="full_name" type="text" required value="Eve Typed"/>')

    const app = await post(t, jar, '/admin/apps', '/admin/apps', { name: 'Typed "App"', redirect_uris: 'not a url', post_logout_redirect_uris: 'https://a.example/bye', skip_consent: 'true', allowed_groups: 'family', introspects: '*' })
    expect(app.status).toBe(400)
    const appHtml = await app.text()
    expect(appHtml).toContain('The redirect URI “not a url” is not an absolute URL.')
    expect(appHtml).toContain('value="Typed &quot;App&quot;"')
    expect(appHtml).toContain('>not a url</textarea>')
    expect(appHtml).toContain('>https://a.example/bye</textarea>')
    expect(appHtml).toContain('<input type="checkbox" name="skip_consent" value="true" checked/>')
    expect(appHtml).toContain('<input type="checkbox" name="allowed_groups" value="family" checked/>')
    expect(appHtml).toContain('name="introspects" type="text" maxlength="4000" value="*"')

    const edit = `/admin/apps/edit?client_id=${grafana.client.id}`
    const edited = await post(t, jar, edit, '/admin/apps/update', { client_id: grafana.client.id, name: 'Grafana 2', redirect_uris: 'https://ok.example/cb\nbad' })
    expect(edited.status).toBe(400)
    const editedHtml = await edited.text()
    expect(editedHtml).toContain('value="Grafana 2"')
    expect(editedHtml).toContain('>https://ok.example/cb\nbad</textarea>')

    const group = await post(t, jar, '/admin/groups', '/admin/groups', { name: 'no spaces allowed' })
    expect(group.status).toBe(400)
    expect(await group.text()).toContain('value="no spaces allowed"')
    const member = await post(t, jar, '/admin/groups', '/admin/groups/add', { name: 'family', user: 'nobody@example.com' })
    expect(member.status).toBe(404)
    expect(await member.text()).toContain('value="nobody@example.com"')

    const resource = await post(t, jar, '/admin/resources', '/admin/resources', { uri: 'ftp://nope', name: 'Typed Tools', scopes: 'a:b=Read\nc:d=Write', token_format: 'jwt', introspectors: 'abc' })
    expect(resource.status).toBe(400)
    const resourceHtml = await resource.text()
    expect(resourceHtml).toContain('value="ftp://nope"')
    expect(resourceHtml).toContain('value="Typed Tools"')
    expect(resourceHtml).toContain('>a:b=Read\nc:d=Write</textarea>')
    expect(resourceHtml).toContain('<option value="jwt" selected>')
    expect(await snapshot(t)).toBe(before)
  })
})

describe('/admin apps, times and the audit log', () => {
  test("an app's page lists the issuer, discovery and every endpoint, with copy buttons shown by a same-origin script", async () => {
    const { t, grafana, jar } = await world()
    const html = await (await get(t, `/admin/apps/edit?client_id=${grafana.client.id}`, jar)).text()
    const origin = t.config.issuer
    const rows: Array<[string, string]> = [
      ['Issuer', origin],
      ['Discovery', `${origin}/.well-known/openid-configuration`],
      ['Authorization', `${origin}/oauth/authorize`],
      ['Token', `${origin}/api/oauth/token`],
      ['UserInfo', `${origin}/api/oauth/userinfo`],
      ['Introspection', `${origin}/api/oauth/introspect`],
      ['Revocation', `${origin}/api/oauth/revoke`],
      ['End session', `${origin}/oauth/logout`],
      ['JWKS', `${origin}/.well-known/jwks.json`],
    ]
    for (const [label, url] of rows) {
      expect(html).toMatch(new RegExp(`<th scope="row">${label}</th><td><code id="endpoint-\\d">${url.replaceAll('.', '\\.')}</code></td><td><button type="button" class="secondary copy" data-copy="endpoint-\\d" aria-label="Copy the ${label} URL" hidden>Copy</button>`))
    }
    expect(html).toContain('<script src="/assets/copy.js" defer></script>')
    const script = await t.handle('/assets/copy.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await script.text()).toContain('navigator.clipboard.writeText')
  })

  test('the audit log names users by email and apps by name, ids beside them, and times in UTC; the keys page says UTC', async () => {
    const { t, bob, grafana, jar } = await world()
    expect((await post(t, jar, '/admin/users', '/admin/users/sign-out', { user_id: bob.id, confirmed: 'yes' })).status).toBe(303)
    t.ctx.audit.record('token.issued', { userId: bob.id, clientId: grafana.client.id })
    await t.ctx.audit.flush()
    const html = await (await get(t, '/admin/audit', jar)).text()
    expect(html).toContain(`<td data-label="User" class="long"><span>carol@example.com</span> <code class="muted">${bob.id}</code></td><td data-label="App" class="long"><span>Grafana</span> <code class="muted">${grafana.client.id}</code></td>`)
    expect(html).toContain('<time datetime="2026-01-01T00:00:00.000Z">2026-01-01 00:00:00 UTC</time>')
    expect(html).toContain(`&quot;actor&quot;:&quot;ann@example.com (`)
    const keys = await (await get(t, '/admin/keys', jar)).text()
    expect(keys).toContain('2026-01-01 00:00:00 UTC</time>')
  })
})
