import { describe, expect, test } from 'bun:test'
import { ApplyError, exportState, parseDocument, planApply } from '../../src/admin/declarative'
import { createClient, DEVICE_CODE } from '../../src/oauth/clients'
import { toYaml } from '../../src/lib/yaml'
import { CALLBACK, addClient, addUser, authorizePath, cookieHeader, csrfFrom, createTestApp, form, postForm, signIn, type TestApp } from '../helpers'

/**
 * Issue 36 / SPEC "Brand and language": a resource's scope descriptions may be given per language
 * in `apply`; the consent, device and account pages and /admin show the reader's language, else
 * the English; export writes them back as given.
 */
const YAML = `
resources:
  - uri: https://mcp.example.com
    name: Home MCP
    scopes:
      "tools:read": { en: Read your tools, de: Ihre Werkzeuge lesen, ja: ツールを読み取る }
      "tools:call": Run tools
`
const MCP = 'https://mcp.example.com'
const plan = (t: TestApp, doc: unknown, prune = false) => planApply(t.store, t.config, doc, { prune, baseDir: '/tmp', now: t.clock.now() })
const speaking = (locale: string, jar?: Record<string, string>) => ({ headers: { 'accept-language': locale, ...(jar ? { cookie: cookieHeader(jar) } : {}) } })

async function applied(): Promise<TestApp> {
  const t = await createTestApp()
  await (await plan(t, parseDocument(YAML, 'latchkey.yaml'))).apply()
  return t
}

describe('resource scope descriptions per language', () => {
  test('apply stores them as given; export writes them back; export → apply (JSON and YAML) is a no-op', async () => {
    const t = await applied()
    const given = { 'tools:read': { en: 'Read your tools', de: 'Ihre Werkzeuge lesen', ja: 'ツールを読み取る' }, 'tools:call': 'Run tools' }
    expect((await t.store.resources.findResource(MCP))?.scopes).toEqual(given)
    const exported = await exportState(t.store)
    expect(exported.resources).toEqual([{ uri: MCP, name: 'Home MCP', scopes: given, token_format: 'opaque', introspectors: [] }])
    expect((await plan(t, JSON.parse(JSON.stringify(exported)), true)).lines).toEqual([])
    expect((await plan(t, parseDocument(toYaml(exported), 'exported.yaml'), true)).lines).toEqual([])
    // A changed translation is a change.
    const changed = await plan(t, parseDocument(YAML.replace('Ihre Werkzeuge lesen', 'Werkzeuge lesen'), 'f.yaml'))
    expect(changed.lines).toEqual([`~ resource ${MCP}`])
    await changed.apply()
    expect((await t.store.resources.findResource(MCP))?.scopes['tools:read']).toEqual({ en: 'Read your tools', de: 'Werkzeuge lesen', ja: 'ツールを読み取る' })
  })

  test('an unknown language, a missing en, an empty or invisible text: an error naming the resource and scope, and nothing changes', async () => {
    const t = await createTestApp()
    await (await plan(t, parseDocument(YAML, 'latchkey.yaml'))).apply()
    const before = await t.store.resources.listResources()
    const doc = {
      groups: [{ name: 'family', members: [] }],
      resources: [
        {
          uri: MCP,
          name: 'Home MCP',
          scopes: { 'tools:read': { en: 'Read', xx: 'Lire' }, 'tools:call': { de: 'Nur Deutsch' }, 'tools:a': { en: '  ' }, 'tools:b': { en: 'ok', fr: 'a\u202eb' }, 'tools:c': ['x'], 'tools:d': '', 'tools:e': null, 'bad scope': 'x' },
        },
        { uri: 'https://other.example', name: 'Other', scopes: { 'x:y': { 'pt-br': 'x', en: 'y' } } },
      ],
    }
    let errors: string[] = []
    try {
      await plan(t, doc)
    } catch (error) {
      expect(error).toBeInstanceOf(ApplyError)
      errors = (error as ApplyError).errors
    }
    const text = 'a description is 1 to 200 characters, without control or invisible characters'
    expect(errors).toEqual([
      `resources[0].scopes.tools:read: (resource ${MCP}) "xx" is not a language Latchkey speaks (en, de, fr, es, it, nl, pt-BR, pl, sv, ja, zh-CN, ar)`,
      `resources[0].scopes.tools:call: (resource ${MCP}) needs an en description: the words for readers of the other languages`,
      `resources[0].scopes.tools:a: (resource ${MCP}) en: ${text}`,
      `resources[0].scopes.tools:b: (resource ${MCP}) fr: ${text}`,
      `resources[0].scopes.tools:c: (resource ${MCP}) must be a description, or a mapping of languages to descriptions ({en: …, de: …})`,
      `resources[0].scopes.tools:d: (resource ${MCP}) ${text}`,
      `resources[0].scopes.tools:e: (resource ${MCP}) must be a description, or a mapping of languages to descriptions ({en: …, de: …})`,
      `resources[0].scopes.bad scope: (resource ${MCP}) a scope name is 1 to 128 printable characters without spaces, quotes or backslashes`,
      'resources[1].scopes.x:y: (resource https://other.example) "pt-br" is not a language Latchkey speaks (en, de, fr, es, it, nl, pt-BR, pl, sv, ja, zh-CN, ar)',
    ])
    expect(await t.store.resources.listResources()).toEqual(before)
    expect(await t.store.groups.listGroups()).toEqual([])
  })

  test('the consent page and /account speak the reader’s language, else English; the CLI’s one text is the same in every language', async () => {
    const t = await applied()
    const { client } = await addClient(t)
    await addUser(t)
    const jar = await signIn(t)
    const params = { client_id: client.id, redirect_uri: CALLBACK, response_type: 'code', scope: 'tools:read tools:call', resource: MCP, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }
    const scopesOf = async (res: Response) => {
      expect(res.status).toBe(200)
      return [...(await res.text()).matchAll(/<li data-scope="([^"]+)">([^<]*)<\/li>/g)].map((m) => `${m[1]}: ${m[2]}`)
    }
    expect(await scopesOf(await t.handle(authorizePath(params), speaking('de', jar)))).toEqual(['tools:read: Ihre Werkzeuge lesen', 'tools:call: Run tools'])
    expect(await scopesOf(await t.handle(authorizePath(params), speaking('ja', jar)))).toEqual(['tools:read: ツールを読み取る', 'tools:call: Run tools'])
    // French is not given: English.
    expect(await scopesOf(await t.handle(authorizePath(params), speaking('fr', jar)))).toEqual(['tools:read: Read your tools', 'tools:call: Run tools'])
    const page = await t.handle(authorizePath({ ...params, ui_locales: 'de' }), speaking('en', jar))
    const allowed = await postForm(t, '/oauth/authorize', { ...params, csrf_token: csrfFrom(await page.text()), decision: 'allow' }, jar)
    expect(allowed.status).toBe(303)
    const account = async (locale: string) => {
      const res = await t.handle('/account', speaking(locale, jar))
      expect(res.status).toBe(200)
      return res.text()
    }
    expect(await account('de')).toContain('Ihre Werkzeuge lesen · Run tools')
    expect(await account('fr')).toContain('Read your tools · Run tools')
  })

  test('the device consent page speaks the reader’s language', async () => {
    const t = await applied()
    await addUser(t)
    const tv = (await createClient(t.store, { name: 'TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
    const started = await t.handle('/api/oauth/device_authorization', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ client_id: tv, scope: 'tools:read', resource: MCP }) })
    expect(started.status).toBe(200)
    const { user_code } = (await started.json()) as { user_code: string }
    const jar = await signIn(t)
    const page = async (locale: string) => (await t.handle(`/device?user_code=${user_code}`, speaking(locale, jar))).text()
    expect(await page('de')).toContain('<li data-scope="tools:read">Ihre Werkzeuge lesen</li>')
    expect(await page('it')).toContain('<li data-scope="tools:read">Read your tools</li>')
  })

  test('/admin lists each scope with its words in the admin’s language', async () => {
    const t = await applied()
    const ann = await addUser(t)
    await t.store.users.setAdmin(ann.id, true)
    const jar = await signIn(t)
    const list = async (locale: string) => {
      await t.store.users.setLanguage(ann.id, { locale, timeZone: null })
      const res = await t.handle('/admin/resources', { headers: { cookie: cookieHeader(jar) } })
      expect(res.status).toBe(200)
      return res.text()
    }
    const de = await list('de')
    expect(de).toContain('<code>tools:read</code> <span class="muted">Ihre Werkzeuge lesen</span>')
    expect(de).toContain('<code>tools:call</code> <span class="muted">Run tools</span>')
    expect(await list('en')).toContain('<code>tools:read</code> <span class="muted">Read your tools</span>')
  })
})
