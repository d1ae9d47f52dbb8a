import { describe, expect, test } from 'bun:test'
import { DEVICE_CODE, createClient } from '../../src/oauth/clients'
import { addClient, addUser, cookieHeader, createTestApp, csrfFrom, form, handleFrom, signIn, type TestApp } from '../helpers'
import { outbox } from '../accounts/mail-flows'
import { signInFrom } from '../sessions/flows'
import { englishLeft } from './english'
import deJson from '../../src/docs/translations/de.json'
const de: Record<string, string> = deJson

/**
 * Issue 36, what was left in /admin and /docs (task i18a): times in the admin's language and zone,
 * an address the server could not learn said in words, /docs' frame in the reader's language, and
 * /admin's refusals worded for the form in the admin's language (the CLI keeps its --flags).
 */
type Jar = Record<string, string>
const DE = { 'accept-language': 'de-DE,de;q=0.9' }

const get = (t: TestApp, path: string, jar?: Jar, headers: Record<string, string> = {}) => t.handle(path, { headers: { ...headers, ...(jar ? { cookie: cookieHeader(jar) } : {}) } })
/** A form of /admin, posted with the CSRF token of `page` (an admin page). */
async function submit(t: TestApp, jar: Jar, page: string, action: string, fields: Record<string, string>): Promise<Response> {
  const csrf = csrfFrom(await (await get(t, page, jar)).text())
  return t.handle(action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) }, body: form({ ...fields, csrf_token: csrf }) })
}

/** Ann, an admin who chose German and Berlin on /account; signed in (in-process: from an address not known). */
async function germanAdmin(timeZone = 'Europe/Berlin') {
  const t = await createTestApp()
  const ann = await addUser(t, 'ann@example.com', 'Ann Admin')
  await t.store.users.setAdmin(ann.id, true)
  await t.store.users.setLanguage(ann.id, { locale: 'de', timeZone })
  const jar = await signIn(t)
  return { t, ann, jar }
}

/** The error note of an /admin page (its role="alert" paragraph), as text. */
const errorNote = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1]

describe('/admin: times in the admin\'s language and zone, naming it', () => {
  test('the audit log and the keys page: German, Berlin time, zone named; the instant kept in datetime', async () => {
    const { t, jar } = await germanAdmin()
    const audit = await (await get(t, '/admin/audit', jar)).text()
    // 2026-01-01 00:00 UTC is 01:00 in Berlin (CET, "MEZ" in German).
    expect(audit).toContain('<time datetime="2026-01-01T00:00:00.000Z">1. Jan. 2026, 01:00:00 MEZ</time>')
    expect(audit).not.toContain('2026-01-01 00:00:00 UTC')
    const keys = await (await get(t, '/admin/keys', jar)).text()
    expect(keys).toContain('<td data-label="Erstellt"><time datetime="2026-01-01T00:00:00.000Z">1. Jan. 2026, 01:00:00 MEZ</time></td>')
  })

  test('"signs from" of a key rotated in: a time in the admin\'s zone, not ISO UTC', async () => {
    const { t, jar } = await germanAdmin('America/New_York')
    await t.ctx.signingKeys.rotate()
    const next = (await t.store.keys.listSigningKeys()).find((k) => k.signsFrom !== null && k.signsFrom > t.clock.now())
    expect(next).toBeDefined()
    const keys = await (await get(t, '/admin/keys', jar)).text()
    // Six minutes after 2026-01-01 00:00 UTC: the evening before in New York.
    expect(next!.signsFrom).toBe(Date.UTC(2026, 0, 1, 0, 6))
    expect(keys).toContain('<td data-label="Status">signiert ab <time datetime="2026-01-01T00:06:00.000Z">31. Dez. 2025, 19:06:00 GMT-5</time></td>')
    expect(keys).toContain('<td data-label="Erstellt"><time datetime="2026-01-01T00:00:00.000Z">31. Dez. 2025, 19:00:00 GMT-5</time></td>')
    expect(keys).not.toContain(' UTC')
  })

  test('an admin with no choice reads UTC, as before', async () => {
    const t = await createTestApp()
    const ann = await addUser(t)
    await t.store.users.setAdmin(ann.id, true)
    const audit = await (await get(t, '/admin/audit', await signIn(t))).text()
    expect(audit).toContain('<time datetime="2026-01-01T00:00:00.000Z">2026-01-01 00:00:00 UTC</time>')
  })
})

describe('an address the server could not learn is said in words on pages and in mails; kept as it is in the data', () => {
  test('the audit log (German), the account page\'s sessions and activity (German); the stored value stays "unknown"', async () => {
    const { t, ann, jar } = await germanAdmin()
    expect((await t.store.audit.list({ userId: ann.id, limit: 10 })).map((e) => e.address)).toContain('unknown')
    const audit = await (await get(t, '/admin/audit', jar)).text()
    expect(audit).toContain('<td data-label="Adresse" class="long">unbekannte Adresse</td>')
    expect(audit).not.toContain('>unknown<')
    const account = await (await get(t, '/account', jar)).text()
    expect(account).toContain('<div class="muted">unbekannte Adresse</div>')
    expect(account).toContain('von einer unbekannten Adresse')
    expect(account).not.toMatch(/\bunknown\b/)
  })

  test('a known address is shown as it is', async () => {
    const t = await createTestApp()
    await addUser(t)
    const jar = await signInFrom(t, { address: '198.51.100.4' })
    const account = await (await get(t, '/account', jar)).text()
    expect(account).toContain('<div class="muted">198.51.100.4</div>')
    expect(account).toContain('from 198.51.100.4')
  })

  test('the device page: the address when known; else, in German, that the server could not learn it', async () => {
    const t = await createTestApp()
    const ann = await addUser(t)
    await t.store.users.setLanguage(ann.id, { locale: 'de', timeZone: 'UTC' })
    const tv = (await createClient(t.store, { name: 'TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
    const start = (peer?: string) => {
      const init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ client_id: tv, scope: 'openid' }) }
      return peer ? handleFrom(t, peer, '/api/oauth/device_authorization', init) : t.handle('/api/oauth/device_authorization', init)
    }
    const jar = await signIn(t)
    const known = ((await (await start('198.51.100.7')).json()) as { user_code: string }).user_code
    expect(await (await get(t, `/device?user_code=${known}`, jar)).text()).toContain('von der Adresse <strong>198.51.100.7</strong>.')
    const unknown = ((await (await start()).json()) as { user_code: string }).user_code
    const html = await (await get(t, `/device?user_code=${unknown}`, jar)).text()
    expect(html).toMatch(/Angefordert am <time datetime="[^"]+">[^<]+<\/time>, von einer Adresse, die der Server nicht ermitteln konnte\./)
    expect(html).not.toContain('unknown')
    expect(englishLeft(html)).toEqual([])
  })

  test('the new-device mail says the address is not known, in the recipient\'s language', async () => {
    const t = await createTestApp({ SMTP_URL: 'smtp://127.0.0.1:2525', LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
    await addUser(t)
    const bob = await addUser(t, 'bob@example.com', 'Bob')
    await t.store.users.setLanguage(bob.id, { locale: 'de', timeZone: 'UTC' })
    // In-process requests have no socket peer: the server cannot learn their address.
    await signIn(t)
    await signIn(t, 'bob@example.com')
    const [english, german] = await outbox(t)
    expect(english!.text).toContain('Address: not known\n')
    expect(german!.to).toBe('bob@example.com')
    expect(german!.text).toContain('Adresse: nicht bekannt\n')
    expect(english!.text + german!.text).not.toMatch(/\bunknown\b/)
  })
})

describe('/docs in the reader\'s language', () => {
  /** Every string of the OpenAPI document (the reference's own texts: summaries, descriptions, examples, names). */
  function referenceTexts(value: unknown, out = new Set<string>()): Set<string> {
    if (typeof value === 'string') out.add(value)
    else if (Array.isArray(value)) for (const v of value) referenceTexts(v, out)
    else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) {
        out.add(k)
        referenceTexts(v, out)
        if (typeof v !== 'string' && typeof v !== 'object') out.add(String(v))
      }
    return out
  }

  test('German: <html lang="de">, the frame and the reference German (protocol names, paths and examples as they are)', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    const res = await get(t, '/docs', undefined, DE)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await res.text()
    expect(html).toStartWith('<!doctype html><html lang="de" dir="ltr">')
    expect(html).toContain('<title>API-Referenz · Latchkey</title>')
    expect(html).toContain('— API-Referenz</h1>')
    expect(html.match(/<(?!option|html)[a-z]+ [^>]*lang="en"[^>]*>[^<]*/g) ?? []).toEqual([])
    expect(html).toContain(`<p>${Bun.escapeHTML(de['OAuth 2.0 authorization server metadata (RFC 8414)']!)}</p>`)
    expect(html).toContain('<p>Maschinenlesbar: <bdi dir="ltr"><a href="/openapi.json">/openapi.json</a></bdi> (OpenAPI 3.1), für Client-Generatoren.</p>')
    expect(html).toContain('<strong>Parameter</strong>')
    expect(html).toContain('<strong>Anfragetext</strong>')
    expect(html).toContain('<strong>Antworten</strong>')
    expect(html).toContain('<h2>Was eine App empfängt</h2>')
    expect(html).toContain(`Beispiel „${de['A refresh, client_secret_post']}“`)
    expect(html).toMatch(/<td class="muted"><bdi dir="ltr">string<\/bdi>, erforderlich<\/td>/)
    expect(html).toMatch(/>Authentifizierung: bearer</)
    expect(html).toMatch(/>Header: [^<]+</)
    // No English left: what remains of the document's own strings once its translated texts are
    // taken out is names, paths, examples and protocol tokens, which stay as they are.
    const escape = (s: string) => Bun.escapeHTML(s)
    let frame = html
    const doc = await (await t.handle('/openapi.json')).json()
    // The reference's German keeps protocol names ("Device Grant", "Authorization: Bearer", ISSUER):
    // the frame is checked here, every reference text's words by tests/i18n/docs-reference.test.ts.
    const tokens = [...referenceTexts(doc)].filter((s) => s.length >= 3).map((s) => (Object.hasOwn(de, s) ? de[s]! : s))
    for (const text of tokens.sort((a, b) => b.length - a.length)) frame = frame.split(escape(text)).join(' ').split(text).join(' ')
    expect(englishLeft(frame)).toEqual([])
    for (const word of ['API reference', 'Machine-readable', 'Parameters', 'Request body', 'Responses', 'Headers:', ', required', 'Example “', 'Served at:', 'Auth:', 'What an app receives', '(to the app)'])
      expect(frame).not.toContain(word)
  })

  test('English stays as it was; each language is its own page (rendered once per language)', async () => {
    const t = await createTestApp()
    const english = await (await get(t, '/docs')).text()
    expect(english).toStartWith('<!doctype html><html lang="en" dir="ltr">')
    expect(english).toContain('<strong>Request body</strong>')
    expect(english).toContain('<p>OAuth 2.0 authorization server metadata (RFC 8414)</p>')
    expect(english.match(/<(?!option|html)[a-z]+ [^>]*lang="en"[^>]*>/g) ?? []).toEqual([])
    const french = await (await get(t, '/docs', undefined, { 'accept-language': 'fr' })).text()
    expect(french).toStartWith('<!doctype html><html lang="fr" dir="ltr">')
    expect(french).toContain('<strong>Corps de la requête</strong>')
    expect(await (await get(t, '/docs')).text()).toBe(english)
    const arabic = await (await get(t, '/docs', undefined, { 'accept-language': 'ar' })).text()
    expect(arabic).toStartWith('<!doctype html><html lang="ar" dir="rtl">')
  })
})

describe('/admin refusals: worded for the form, in the admin\'s language; the CLI\'s words unchanged', () => {
  test('resources: a scope given twice, a bad URI, an unknown introspector — German, no --flag', async () => {
    const { t, jar } = await germanAdmin()
    const twice = await submit(t, jar, '/admin/resources', '/admin/resources', { uri: 'https://mcp.example.com', name: 'MCP', scopes: 'x=Read\nx=Again', token_format: 'opaque' })
    expect(twice.status).toBe(400)
    const html = await twice.text()
    expect(errorNote(html)).toBe('Scopes: „x“ ist doppelt angegeben.')
    expect(englishLeft(html)).toEqual([])
    const badUri = await submit(t, jar, '/admin/resources', '/admin/resources', { uri: 'not a uri', name: 'MCP', scopes: 'x=Read', token_format: 'opaque' })
    expect(errorNote(await badUri.text())).toBe('Die URI muss eine absolute http(s)-Adresse ohne Fragment sein; „not a uri“ ist keine.')
    const ghost = await submit(t, jar, '/admin/resources', '/admin/resources', { uri: 'https://mcp.example.com', name: 'MCP', scopes: 'x=Read', token_format: 'opaque', introspectors: 'ghost' })
    expect(errorNote(await ghost.text())).toBe('Keine App hat die Client-ID „ghost“.')
    expect(await t.store.resources.listResources()).toEqual([])
  })

  test('apps, groups, sites and users: German words for the form; an English admin reads English without --flags', async () => {
    const { t, jar } = await germanAdmin()
    const app = await submit(t, jar, '/admin/apps', '/admin/apps', { name: 'Grafana', redirect_uris: 'not a url' })
    expect(app.status).toBe(400)
    expect(errorNote(await app.text())).toBe('Die Weiterleitungs-URI „not a url“ ist keine absolute URL.')
    const { client } = await addClient(t, { name: 'Photos' })
    const introspects = await submit(t, jar, '/admin/apps', '/admin/apps/update', { client_id: client.id, name: 'Photos', redirect_uris: 'https://photos.example.com/cb', introspects: '* ' + client.id })
    expect(errorNote(await introspects.text())).toBe('Token-Prüfung: * (die Token aller Apps) steht allein, ohne Client-IDs daneben.')
    const group = await submit(t, jar, '/admin/groups', '/admin/groups', { name: '-bad' })
    expect(errorNote(await group.text())).toBe('Der Gruppenname „-bad“ muss aus 1 bis 64 der Zeichen A–Z a–z 0–9 . _ - bestehen und mit einem Buchstaben oder einer Ziffer beginnen.')
    const site = await submit(t, jar, '/admin/sites', '/admin/sites', { host: 'photos.example.com', name: 'Photos', policy: 'one-factor', allowed_groups: 'nobody' })
    expect(errorNote(await site.text())).toBe('Es gibt keine Gruppe „nobody“.')
    const user = await submit(t, jar, '/admin/users', '/admin/users', { email: 'ann@example.com', full_name: 'Ann Again', password: 'long enough password' })
    expect(errorNote(await user.text())).toBe('Ein Konto mit dieser E-Mail-Adresse gibt es bereits.')
    // A refusal the catalog knows from the pages (the account's own checks), said in German too.
    const short = await submit(t, jar, '/admin/users', '/admin/users', { email: 'dora@example.com', full_name: 'Dora', password: 'short' })
    expect(errorNote(await short.text())).toBe('Das Passwort muss 8 bis 256 Zeichen lang sein.')

    await t.store.users.setLanguage((await t.store.users.findUserByEmail('ann@example.com'))!.id, { locale: null, timeZone: null })
    const english = await submit(t, jar, '/admin/resources', '/admin/resources', { uri: 'https://mcp.example.com', name: 'MCP', scopes: 'openid=Mine', token_format: 'opaque' })
    expect(errorNote(await english.text())).toBe('Scopes: “openid” is one of the server’s own scopes.')
  })

  test('the CLI\'s (and the JSON APIs\') words are the InputError\'s message, unchanged', async () => {
    const { createResource } = await import('../../src/oauth/resources')
    const t = await createTestApp()
    const refused = await createResource(t.store, { uri: 'https://mcp.example.com', name: 'MCP', scopes: ['x=Read', 'x=Again'] }, t.clock.now()).catch((e: Error) => e)
    expect((refused as Error).message).toBe('--scope "x" is given twice')
    expect((refused as { words?: unknown }).words).toEqual({ key: 'admin.input.scopeTwice', params: { scope: 'x' } })
  })
})
