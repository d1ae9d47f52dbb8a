import { describe, expect, test } from 'bun:test'
import { REAUTH_AFTER_MS } from '../../src/admin/web'
import { checkWith, PROXIES, siteSession, type Jar } from '../authz/flow'
import { addUser, cookieHeader, createTestApp, csrfFrom, postForm, signIn, type TestApp } from '../helpers'

/** An app with an admin (Ann) signed in, a group `family` with Bob in it. */
async function adminApp() {
  const t = await createTestApp(PROXIES)
  const ann = await addUser(t, 'ann@example.com', 'Ann Admin')
  const bob = await addUser(t, 'bob@example.com', 'Bob Member')
  await t.store.users.setAdmin(ann.id, true)
  await t.store.groups.createGroup('family', 0)
  await t.store.groups.addMember('family', bob.id)
  const jar = await signIn(t, 'ann@example.com')
  return { t, ann, bob, jar }
}

const get = (t: TestApp, path: string, jar: Jar) => t.handle(path, { headers: { cookie: cookieHeader(jar) } })

/** Posts a /admin/sites form with the page's CSRF token. */
async function submit(t: TestApp, jar: Jar, action: string, fields: Record<string, string | string[]>) {
  const csrf = csrfFrom(await (await get(t, '/admin/sites', jar)).text())
  return postForm(t, action, { csrf_token: csrf, ...fields }, jar)
}

async function auditKinds(t: TestApp) {
  await t.ctx.audit.flush()
  return (await t.store.audit.list({ limit: 100 })).filter((e) => e.kind.startsWith('site.')).map((e) => ({ kind: e.kind, detail: e.detail && JSON.parse(e.detail) }))
}

const PHOTOS = { host: 'Photos.Example.com', name: 'Photos', policy: 'one-factor', allowed_groups: 'family', jwt: 'true' }

describe('/admin/sites', () => {
  test('lists sites (stacked-row labels), adds one with groups and Remote-Jwt, adds a rule; each in the audit log', async () => {
    const { t, ann, jar } = await adminApp()
    const empty = await get(t, '/admin/sites', jar)
    expect(empty.status).toBe(200)
    const emptyHtml = await empty.text()
    expect(emptyHtml).toContain('No sites yet.')
    expect(emptyHtml).toContain('<strong>Sites</strong>')
    expect(emptyHtml).not.toContain('action="/admin/sites/rule"')

    const made = await submit(t, jar, '/admin/sites', PHOTOS)
    expect(made.status).toBe(303)
    expect(made.headers.get('location')).toBe('/admin/sites')
    expect(await t.store.sites.listSites()).toEqual([{ host: 'photos.example.com', name: 'Photos', policy: 'one-factor', allowedGroups: ['family'], jwt: true, rules: [] }])
    const rule = await submit(t, jar, '/admin/sites/rule', { host: 'photos.example.com', paths: '^/public/\n^/share/', methods: 'get head', networks: '', clients: '', policy: 'bypass' })
    expect(rule.status).toBe(303)
    expect((await t.store.sites.listSites())[0]!.rules).toEqual([{ paths: ['^/public/', '^/share/'], methods: ['GET', 'HEAD'], networks: [], clients: [], policy: 'bypass' }])

    const page = await get(t, '/admin/sites', { ...jar, ...Object.fromEntries(made.headers.getSetCookie().map((c) => c.split(';')[0]!.split('='))) })
    const html = await page.text()
    expect(html).toContain('<td data-label="Host" class="long"><code>photos.example.com</code></td>')
    expect(html).toContain('<td data-label="Name">Photos</td>')
    expect(html).toContain('<td data-label="Policy">one-factor</td>')
    expect(html).toContain('<td data-label="Allowed groups">family</td>')
    expect(html).toContain('<td data-label="Rules">1</td>')
    expect(html).toContain('action="/admin/sites/rule"')
    expect(await auditKinds(t)).toEqual([
      { kind: 'site.rule_added', detail: { actor: ann.id, site: 'photos.example.com' } },
      { kind: 'site.created', detail: { actor: ann.id, site: 'photos.example.com' } },
    ])
  })

  test('bad input is refused with the reason, what was typed is kept, nothing changes', async () => {
    const { t, jar } = await adminApp()
    const badHost = await submit(t, jar, '/admin/sites', { ...PHOTOS, host: 'photos.example.com:8443' })
    expect(badHost.status).toBe(400)
    const badHostHtml = await badHost.text()
    expect(badHostHtml).toContain('The host must be a DNS name without a port (photos.example.com), or *.example.com for its subdomains; “photos.example.com:8443” is not.')
    expect(badHostHtml).toContain('value="photos.example.com:8443"')
    expect((await submit(t, jar, '/admin/sites', { ...PHOTOS, allowed_groups: 'nobody' })).status).toBe(400)
    expect((await submit(t, jar, '/admin/sites', { ...PHOTOS, policy: 'maybe' })).status).toBe(400)
    expect(await t.store.sites.listSites()).toEqual([])

    expect((await submit(t, jar, '/admin/sites', PHOTOS)).status).toBe(303)
    const taken = await submit(t, jar, '/admin/sites', PHOTOS)
    expect(taken.status).toBe(400)
    expect(await taken.text()).toContain('A site for “photos.example.com” exists already.')

    const badRule = await submit(t, jar, '/admin/sites/rule', { host: 'photos.example.com', paths: '^/(unclosed', policy: 'bypass' })
    expect(badRule.status).toBe(400)
    const badRuleHtml = await badRule.text()
    expect(badRuleHtml).toContain('Paths: “^/(unclosed” is not a regular expression.')
    expect(badRuleHtml).toContain('^/(unclosed</textarea>')
    const lookAhead = await submit(t, jar, '/admin/sites/rule', { host: 'photos.example.com', paths: '^/(?!public/)', policy: 'bypass' })
    expect(lookAhead.status).toBe(400)
    expect(await lookAhead.text()).toContain('Paths: “^/(?!public/)” is JavaScript syntax that RE2 does not read (a look-around, a back-reference, a \\u escape, a repetition count over 1000). Paths are matched in linear time with RE2’s syntax, as Authelia’s are.')
    expect((await submit(t, jar, '/admin/sites/rule', { host: 'photos.example.com', networks: '10.0.0.0/33', policy: 'bypass' })).status).toBe(400)
    const noSite = await submit(t, jar, '/admin/sites/rule', { host: 'ghost.example.com', policy: 'bypass' })
    expect(noSite.status).toBe(400)
    expect(await noSite.text()).toContain('There is no site for “ghost.example.com”.')
    expect((await t.store.sites.listSites())[0]!.rules).toEqual([])
  })

  test('delete asks first, naming the site; confirmed, the site and its sessions are gone', async () => {
    const { t, ann, jar } = await adminApp()
    expect((await submit(t, jar, '/admin/sites', PHOTOS)).status).toBe(303)
    const bobJar = await signIn(t, 'bob@example.com')
    const cookie = await siteSession(t, bobJar, 'http://photos.example.com/album')
    expect((await checkWith(t, 'http://photos.example.com/album', cookie)).status).toBe(200)

    const asked = await submit(t, jar, '/admin/sites/delete', { host: 'photos.example.com' })
    expect(asked.status).toBe(200)
    const html = await asked.text()
    expect(html).toContain('<p class="confirm"><strong>Delete the site Photos (photos.example.com): its sessions end, and the proxy&#x27;s checks for it are refused</strong></p>')
    expect(html).toContain('<button type="submit" class="danger">Delete Photos</button>')
    expect(html).toContain('<a href="/admin/sites">Cancel</a>')
    expect((await t.store.sites.listSites()).length).toBe(1)

    const done = await postForm(t, '/admin/sites/delete', { csrf_token: csrfFrom(html), host: 'photos.example.com', confirmed: 'yes' }, jar)
    expect(done.status).toBe(303)
    expect(await t.store.sites.listSites()).toEqual([])
    expect((await checkWith(t, 'http://photos.example.com/album', cookie)).status).toBe(403)
    expect(await t.store.sites.findSiteSession(await sha(cookie.split('=')[1]!), 'photos.example.com', t.clock.now(), 0)).toBeUndefined()
    expect((await auditKinds(t))[0]).toEqual({ kind: 'site.deleted', detail: { actor: ann.id, site: 'photos.example.com' } })

    const gone = await submit(t, jar, '/admin/sites/delete', { host: 'photos.example.com' })
    expect(gone.status).toBe(404)
    expect(await gone.text()).toContain('There is no such site.')
  })

  test('after 15 minutes adding a site, adding a rule and deleting a site ask for the password and change nothing; with it they are made', async () => {
    const { t, jar } = await adminApp()
    expect((await submit(t, jar, '/admin/sites', { ...PHOTOS, host: 'wiki.example.com', name: 'Wiki' })).status).toBe(303)
    const cases: Array<[string, Record<string, string>]> = [
      ['/admin/sites', PHOTOS],
      ['/admin/sites/rule', { host: 'wiki.example.com', paths: '^/', policy: 'bypass' }],
      ['/admin/sites/delete', { host: 'wiki.example.com', confirmed: 'yes' }],
    ]
    for (const [action, fields] of cases) {
      t.clock.advance(REAUTH_AFTER_MS + 1000)
      const before = await t.store.sites.listSites()
      const asked = await submit(t, jar, action, fields)
      const html = await asked.text()
      expect({ action, status: asked.status, asks: html.includes('Confirm it is you') && html.includes('name="confirm_password"') }).toEqual({ action, status: 200, asks: true })
      expect(await t.store.sites.listSites()).toEqual(before)
      const done = await postForm(t, action, { csrf_token: csrfFrom(html), ...fields, confirm_password: 'correct horse battery' }, jar)
      expect({ action, status: done.status }).toEqual({ action, status: 303 })
      expect(Bun.deepEquals(await t.store.sites.listSites(), before)).toBe(false)
    }
  })

  test('every form needs its CSRF token; non-admins get the 404 of no route', async () => {
    const { t, jar } = await adminApp()
    for (const action of ['/admin/sites', '/admin/sites/rule', '/admin/sites/delete']) {
      expect((await postForm(t, action, { ...PHOTOS, policy: 'bypass' }, jar)).status).toBe(403)
    }
    expect(await t.store.sites.listSites()).toEqual([])
    const bobJar = await signIn(t, 'bob@example.com')
    expect((await get(t, '/admin/sites', bobJar)).status).toBe(404)
    expect((await postForm(t, '/admin/sites', { ...PHOTOS, csrf_token: 'x'.repeat(43) }, bobJar)).status).toBe(404)
  })
})

async function sha(value: string): Promise<string> {
  const { sha256 } = await import('../../src/lib/crypto')
  return sha256(value)
}
