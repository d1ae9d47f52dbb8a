import { beforeEach, describe, expect, test } from 'bun:test'
import { createGroup } from '../../src/accounts/groups'
import { etagOf } from '../../src/brand/config'
import { checkLaunchUrl, setClientLogo, setLaunchUrl } from '../../src/oauth/client-logo'
import { CALLBACK, addClient, addUser, authorizeAndAllow, authorizePath, cookieHeader, createTestApp, signIn, type TestApp } from '../helpers'
import { ApplyError, exportState, parseDocument, planApply } from '../../src/admin/declarative'
import { GIF, PNG, WEBP, svg, writeFiles } from './fixtures'

// SPEC "Brand and language": per app a logo (PNG/WebP/SVG ≤ 256 KiB, in the database) and a launch
// URL; the consent page shows the logo; /account → "Your apps" lists what the user may open.
let t: TestApp
beforeEach(async () => {
  t = await createTestApp()
})

const bytes = (b: Uint8Array) => new Uint8Array(b)
const page = async (path: string, jar: Record<string, string>) => (await t.handle(path, { headers: { cookie: cookieHeader(jar) } })).text()
/** The "Your apps" section's entries: [name, link or null, second line]. */
function yourApps(html: string): Array<[string, string | null, string]> {
  const section = /<section aria-labelledby="your-apps">([\s\S]*?)<\/section>/.exec(html)?.[1]
  if (!section) throw new Error('no Your apps section')
  return [...section.matchAll(/<li>[\s\S]*?(?:<a href="([^"]*)" class="app-name">([^<]*)<\/a>|<strong class="app-name">([^<]*)<\/strong>)<div class="muted">([^<]*)<\/div>/g)].map((m) => [m[2] ?? m[3]!, m[1] ?? null, m[4]!])
}

describe('app logos', () => {
  test('each type served as itself from the database: its type, nosniff, the SVG CSP, cached with the current version only', async () => {
    const app = await addClient(t, { name: 'Wiki' })
    const id = app.client.id
    expect((await t.handle(`/assets/apps/${id}/logo`)).status).toBe(404)
    for (const [file, type] of [[PNG, 'image/png'], [WEBP, 'image/webp'], [svg('Wiki'), 'image/svg+xml']] as const) {
      expect(await setClientLogo(t.store, id, bytes(file), t.clock.now())).toBe(true)
      const etag = etagOf(file)
      const res = await t.handle(`/assets/apps/${id}/logo?v=${etag}`)
      expect([res.status, res.headers.get('content-type'), res.headers.get('x-content-type-options'), res.headers.get('content-security-policy'), res.headers.get('cache-control'), res.headers.get('etag')]).toEqual([
        200,
        type,
        'nosniff',
        "default-src 'none'; style-src 'unsafe-inline'",
        'public, max-age=86400',
        `"${etag}"`,
      ])
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes(file))
      expect((await t.handle(`/assets/apps/${id}/logo?v=old`)).headers.get('cache-control')).toBe('no-cache')
      expect((await t.store.clients.findClient(id))!.logoEtag).toBe(etag)
    }
    expect(await setClientLogo(t.store, id, null, t.clock.now())).toBe(true)
    expect((await t.handle(`/assets/apps/${id}/logo`)).status).toBe(404)
    expect((await t.store.clients.findClient(id))!.logoEtag).toBeNull()
    expect((await t.handle('/assets/apps/nope/logo')).status).toBe(404)
    expect((await t.handle(`/assets/apps/${'x'.repeat(300)}/logo`)).status).toBe(404)
  })

  test('a GIF, a file over 256 KiB, an unknown app: refused, nothing changed; deleting the app deletes its logo', async () => {
    const app = await addClient(t, { name: 'Wiki' })
    const id = app.client.id
    await setClientLogo(t.store, id, bytes(PNG), t.clock.now())
    await expect(setClientLogo(t.store, id, bytes(GIF), t.clock.now())).rejects.toThrow('the logo is not a PNG, WebP or SVG file')
    await expect(setClientLogo(t.store, id, new Uint8Array(Buffer.concat([PNG, Buffer.alloc(256 * 1024 + 1 - PNG.length)])), t.clock.now())).rejects.toThrow('the logo is 262145 bytes; at most 256 KiB')
    expect(new Uint8Array(await (await t.handle(`/assets/apps/${id}/logo`)).arrayBuffer())).toEqual(bytes(PNG))
    expect(await setClientLogo(t.store, 'nope', bytes(PNG), t.clock.now())).toBe(false)
    expect(await t.rows('SELECT client_id FROM client_logos')).toEqual([{ client_id: id }])
    await t.store.clients.deleteClient(id)
    expect(await t.rows('SELECT client_id FROM client_logos')).toEqual([])
  })

  test('launch URLs: https, or http on loopback; nothing else', async () => {
    for (const good of ['https://wiki.example/', 'http://localhost:8080/x', 'http://127.0.0.1/', 'http://[::1]:3000/']) expect(checkLaunchUrl(good)).toBe(good)
    for (const bad of ['http://wiki.example/', 'javascript:alert(1)', 'data:text/html,x', 'ftp://wiki.example/', '/relative', 'https://user:pw@wiki.example/', 'https://wiki.example/\nx'])
      expect(() => checkLaunchUrl(bad)).toThrow()
    const app = await addClient(t, { name: 'Wiki' })
    await expect(setLaunchUrl(t.store, app.client.id, 'javascript:alert(1)')).rejects.toThrow('must be https (or http on localhost)')
    expect((await t.store.clients.findClient(app.client.id))!.launchUrl).toBeNull()
  })

  test("the consent page shows the app's logo (same-origin, alt=\"\" beside its name); an app without one shows none", async () => {
    const app = await addClient(t, { name: 'Wiki <b>' })
    await addUser(t)
    const jar = await signIn(t)
    const params = { response_type: 'code', client_id: app.client.id, redirect_uri: CALLBACK, scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }
    expect(await page(authorizePath(params), jar)).not.toContain('class="app-logo')
    await setClientLogo(t.store, app.client.id, bytes(svg('Wiki')), t.clock.now())
    const html = await page(authorizePath(params), jar)
    expect(html).toContain(`<main><img class="app-logo large" src="/assets/apps/${app.client.id}/logo?v=${etagOf(svg('Wiki'))}" alt="" width="64" height="64"/><h1><span>Wiki &lt;b&gt;</span> wants to access`)
  })
})

describe('dynamic registration keeps ignoring logo_uri', () => {
  test('a logo_uri (RFC 7591 §2) is stored nowhere, fetched never and shown nowhere: the consent page has no logo', async () => {
    const reg = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    const res = await reg.handle('/api/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [CALLBACK], client_name: 'Registered', logo_uri: 'https://tracker.example/logo.png', token_endpoint_auth_method: 'none' }) })
    expect(res.status).toBe(201)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).not.toContainKey('logo_uri')
    expect((await reg.store.clients.findClient(body.client_id as string))!.logoEtag).toBeNull()
    await addUser(reg)
    const jar = await signIn(reg)
    const params = { response_type: 'code', client_id: body.client_id as string, redirect_uri: CALLBACK, scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }
    const html = await (await reg.handle(authorizePath(params), { headers: { cookie: cookieHeader(jar) } })).text()
    expect(html).toContain('This app registered itself')
    expect(html).not.toContain('tracker.example')
    expect(html).not.toContain('class="app-logo')
  })
})

describe('/account → Your apps', () => {
  test('apps with a launch URL the user may use (no allowed groups, or one of theirs) and the apps they authorized, by name, with logos', async () => {
    const ann = await addUser(t, 'ann@example.com', 'Ann')
    const bob = await addUser(t, 'bob@example.com', 'Bob')
    await createGroup(t.store, 'family', t.clock.now())
    await createGroup(t.store, 'staff', t.clock.now())
    await t.store.groups.addMember('family', ann.id)
    const open = await addClient(t, { name: 'Wiki' })
    const familyOnly = await addClient(t, { name: 'Photos' })
    const staffOnly = await addClient(t, { name: 'Payroll' })
    const noLink = await addClient(t, { name: 'Calendar' })
    const authorizedNoLink = await addClient(t, { name: 'Notes with a very long name that must wrap on a phone screen' })
    await setLaunchUrl(t.store, open.client.id, 'https://wiki.example/')
    await setLaunchUrl(t.store, familyOnly.client.id, 'https://photos.example/albums')
    await setLaunchUrl(t.store, staffOnly.client.id, 'https://payroll.example/')
    await t.store.groups.setAllowedGroups(familyOnly.client.id, ['family'])
    await t.store.groups.setAllowedGroups(staffOnly.client.id, ['staff'])
    await setClientLogo(t.store, familyOnly.client.id, bytes(PNG), t.clock.now())
    void noLink

    const annJar = await signIn(t, 'ann@example.com')
    await authorizeAndAllow(t, annJar, { response_type: 'code', client_id: authorizedNoLink.client.id, redirect_uri: CALLBACK, scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })
    const annPage = await page('/account', annJar)
    expect(yourApps(annPage)).toEqual([
      ['Notes with a very long name that must wrap on a phone screen', null, 'You allowed it to use your account'],
      ['Photos', 'https://photos.example/albums', 'photos.example'],
      ['Wiki', 'https://wiki.example/', 'wiki.example'],
    ])
    expect(annPage).toContain(`<img class="app-logo" src="/assets/apps/${familyOnly.client.id}/logo?v=${etagOf(PNG)}" alt="" width="40" height="40"/>`)
    expect(annPage).toContain('<span class="app-logo initial" aria-hidden="true">W</span>')

    // Bob is in no group: only the open app; once in staff, Payroll too.
    const bobJar = await signIn(t, 'bob@example.com')
    expect(yourApps(await page('/account', bobJar))).toEqual([['Wiki', 'https://wiki.example/', 'wiki.example']])
    await t.store.groups.addMember('staff', bob.id)
    expect(yourApps(await page('/account', bobJar))).toEqual([
      ['Payroll', 'https://payroll.example/', 'payroll.example'],
      ['Wiki', 'https://wiki.example/', 'wiki.example'],
    ])
    // An app he authorized that is later closed to his groups stays listed (he authorized it), without its link.
    await t.store.groups.removeMember('staff', bob.id)
    await authorizeAndAllow(t, bobJar, { response_type: 'code', client_id: open.client.id, redirect_uri: CALLBACK, scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })
    await t.store.groups.setAllowedGroups(open.client.id, ['staff'])
    expect(yourApps(await page('/account', bobJar))).toEqual([['Wiki', null, 'You allowed it to use your account']])
  })

  test('nothing to open: the section says so', async () => {
    await addUser(t)
    const html = await page('/account', await signIn(t))
    expect(html).toContain('<section aria-labelledby="your-apps"><h2 id="your-apps">Your apps</h2><p class="muted">No apps yet.')
  })

  test('/admin shows an app\'s logo and launch URL', async () => {
    const admin = await addUser(t)
    await t.store.users.setAdmin(admin.id, true)
    const app = await addClient(t, { name: 'Wiki' })
    await setLaunchUrl(t.store, app.client.id, 'https://wiki.example/')
    await setClientLogo(t.store, app.client.id, bytes(WEBP), t.clock.now())
    const html = await page(`/admin/apps/edit?client_id=${app.client.id}`, await signIn(t))
    expect(html).toContain(`<div class="app-head"><img class="app-logo" src="/assets/apps/${app.client.id}/logo?v=${etagOf(WEBP)}" alt="" width="40" height="40"/><h2>Wiki</h2></div>`)
    expect(html).toContain('Opens at <a href="https://wiki.example/" class="long">https://wiki.example/</a> from users')
  })
})

describe('latchkey apply / export: logo_file and launch_url', () => {
  const files = writeFiles({ 'wiki.svg': svg('Wiki'), 'wiki.png': PNG, 'bad.gif': GIF })
  const dir = files['wiki.svg']!.replace(/\/[^/]+$/, '')
  const doc = (extra: string) => parseDocument(`clients:\n  - client_id: wiki\n    name: Wiki\n    redirect_uris: [https://wiki.example/cb]\n${extra}`, 'test.yaml')
  const plan = (extra: string) => planApply(t.store, t.config, doc(extra), { prune: false, baseDir: dir, now: t.clock.now() })

  test('apply sets the logo from a file (relative to the file) and the launch URL; twice changes nothing; export names the launch URL, not the logo, and applies as a no-op', async () => {
    const first = await plan('    logo_file: wiki.svg\n    launch_url: https://wiki.example/\n')
    expect(first.lines).toEqual(['+ client wiki'])
    await first.apply()
    const wiki = (await t.store.clients.findClient('wiki'))!
    expect([wiki.launchUrl, wiki.logoEtag]).toEqual(['https://wiki.example/', etagOf(svg('Wiki'))])
    expect((await plan('    logo_file: wiki.svg\n    launch_url: https://wiki.example/\n')).lines).toEqual([])
    const changed = await plan('    logo_file: wiki.png\n    launch_url: https://wiki.example/home\n')
    expect(changed.lines).toEqual(['~ client wiki: launch_url, logo'])
    await changed.apply()
    expect((await t.store.clients.findClient('wiki'))!.logoEtag).toBe(etagOf(PNG))

    const exported = await exportState(t.store)
    expect((exported.clients as Array<Record<string, unknown>>)[0]).toMatchObject({ client_id: 'wiki', launch_url: 'https://wiki.example/home' })
    expect((exported.clients as Array<Record<string, unknown>>)[0]).not.toContainKey('logo_file')
    expect((await planApply(t.store, t.config, exported, { prune: false, baseDir: dir, now: t.clock.now() })).lines).toEqual([])
    expect((await t.store.clients.findClient('wiki'))!.logoEtag).toBe(etagOf(PNG))
  })

  test('a logo of another type, a missing file, a plain-http launch URL: every error named by its path, nothing applied', async () => {
    const refused = await plan('    logo_file: bad.gif\n    launch_url: http://wiki.example/\n').catch((e) => e)
    expect(refused).toBeInstanceOf(ApplyError)
    expect((refused as ApplyError).errors).toEqual([
      'clients[0].launch_url: launch URL "http://wiki.example/" must be https (or http on localhost)',
      `clients[0].logo_file: ${dir}/bad.gif is not a PNG, WebP or SVG file`,
    ])
    expect(((await plan('    logo_file: none.png\n').catch((e) => e)) as ApplyError).errors).toEqual([`clients[0].logo_file: cannot read ${dir}/none.png`])
    expect(await t.store.clients.findClient('wiki')).toBeUndefined()
  })
})
