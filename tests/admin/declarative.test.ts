import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApplyError, exportState, parseDocument, planApply } from '../../src/admin/declarative'
import { sha256 } from '../../src/lib/crypto'
import { toYaml } from '../../src/lib/yaml'
import { addClient, addUser, bearer, cookieHeader, createTestApp, mintToken, signIn, type TestApp } from '../helpers'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-apply-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const SECRET = 'grafana-secret-0123456789abcdef'
writeFileSync(join(dir, 'grafana.secret'), `${SECRET}\n`, { mode: 0o600 })
writeFileSync(join(dir, 'open.secret'), `${SECRET}\n`)
chmodSync(join(dir, 'open.secret'), 0o644)

const YAML = `
clients:
  - client_id: grafana
    name: Grafana
    redirect_uris: [https://grafana.example.com/login/generic_oauth]
    post_logout_redirect_uris: []
    public: false
    skip_consent: false
    require_mfa: false
    allowed_groups: [family]
    secret_file: grafana.secret
  - name: Notes
    redirect_uris: [http://127.0.0.1/callback]
    public: true
groups:
  - name: family
    members: [ada@example.com]
users:
  - email: ada@example.com
    full_name: Ada
    admin: true
resources:
  - uri: https://mcp.example.com
    name: Home MCP
    scopes: { "tools:read": Read your tools }
    token_format: opaque
`

let t: TestApp
beforeEach(async () => {
  t = await createTestApp()
})

const plan = (doc: unknown, prune = false) => planApply(t.store, t.config, doc, { prune, baseDir: dir, now: t.clock.now() })

async function errorsOf(doc: unknown, prune = false): Promise<string[]> {
  try {
    await plan(doc, prune)
  } catch (error) {
    expect(error).toBeInstanceOf(ApplyError)
    return (error as ApplyError).errors
  }
  throw new Error('the document was accepted')
}

describe('latchkey apply: the database made to match a file', () => {
  test('the plan, the changes, and a second apply that changes nothing; export → apply is a no-op', async () => {
    const first = await plan(parseDocument(YAML, 'latchkey.yaml'))
    expect(first.lines).toEqual(['+ group family', '+ user ada@example.com (invited)', '+ member ada@example.com of family', '+ client grafana', '+ client Notes', '+ resource https://mcp.example.com'])
    const shown = await first.apply()
    expect(shown[0]).toStartWith('invitation for ada@example.com: http://localhost:3000/')
    expect(shown.slice(1)).toEqual(['client grafana (Grafana) created', 'client ' + shown[2]!.split(' ')[1] + ' (Notes) created'])
    const grafana = await t.store.clients.findClient('grafana')
    expect(grafana).toMatchObject({ name: 'Grafana', secretHash: sha256(SECRET), kind: 'operator' })
    expect(await t.store.groups.allowedGroups('grafana')).toEqual(['family'])
    expect((await t.store.users.listUsers()).map((u) => [u.email, u.fullName, u.admin])).toEqual([['ada@example.com', 'Ada', true]])
    expect((await t.store.resources.findResource('https://mcp.example.com'))?.scopes).toEqual({ 'tools:read': 'Read your tools' })

    expect((await plan(parseDocument(YAML, 'latchkey.yaml'))).lines).toEqual([])
    const exported = await exportState(t.store)
    expect(exported.users).toEqual([{ email: 'ada@example.com', full_name: 'Ada', admin: true, disabled: false }])
    expect((await plan(JSON.parse(JSON.stringify(exported)))).lines).toEqual([])
    expect((await plan(parseDocument(toYaml(exported), 'exported.yaml'))).lines).toEqual([])
    expect(JSON.stringify(exported)).not.toContain(SECRET)
  })

  test('changes are listed per field and applied; --prune deletes only in the sections the file has', async () => {
    await (await plan(parseDocument(YAML, 'latchkey.yaml'))).apply()
    await addUser(t, 'bob@example.com', 'Bob')
    await t.store.groups.createGroup('extra', t.clock.now())
    const changed = parseDocument(YAML.replace('full_name: Ada', 'full_name: Ada L.').replace('require_mfa: false', 'require_mfa: true').replace('Home MCP', 'Home'), 'f.yaml') as Record<string, unknown>
    const p = await plan(changed)
    expect(p.lines).toEqual(['~ user ada@example.com: full_name', '~ client grafana: require_mfa', '~ resource https://mcp.example.com'])
    await p.apply()
    expect((await t.store.clients.findClient('grafana'))?.requireMfa).toBe(true)
    const onlyGroups = { groups: [{ name: 'family', members: ['ada@example.com'] }] }
    expect((await plan(onlyGroups, true)).lines).toEqual(['- group extra'])
    await (await plan(onlyGroups, true)).apply()
    // Users were not in the file: --prune left them alone.
    expect((await t.store.users.listUsers()).map((u) => u.email).sort()).toEqual(['ada@example.com', 'bob@example.com'])
  })

  test('an invalid file: every error with its path, and nothing changes', async () => {
    const errors = await errorsOf({
      clients: [{ name: 'A', redirect_uris: [] }, { redirect_uris: ['javascript:alert(1)'], public: 'yes', allowed_groups: ['ghosts'], secret_file: 'missing.secret', color: 'red' }],
      groups: [{ name: 'bad name', members: ['nobody@example.com'] }],
      users: [{ email: 'not-an-email', full_name: '' }],
      resources: [{ uri: 'https://r.example#x', name: 'R', scopes: ['x'], token_format: 'paseto', introspectors: ['nope'] }],
      extra: [],
    })
    expect(errors).toEqual([
      'extra: unknown section (clients, groups, users, resources, sites, providers)',
      'users[0].email: email address is not valid',
      'users[0].full_name: must be a non-empty string',
      'groups[0].name: group name "bad name" must be 1 to 64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)',
      'groups[0].members[0]: no user nobody@example.com (in the database or in users)',
      'clients[0].redirect_uris: must list at least one redirect URI',
      'clients[1].color: unknown key',
      'clients[1].name: must be a non-empty string',
      'clients[1].redirect_uris[0]: redirect URI "javascript:alert(1)" uses a forbidden scheme',
      'clients[1].public: must be true or false',
      'clients[1].allowed_groups[0]: no group ghosts (in the database or in groups)',
      `clients[1].secret_file: ${join(dir, 'missing.secret')} does not exist`,
      'resources[0].uri: must be an absolute http(s) URI without a fragment',
      'resources[0].scopes: must be a mapping of scope names to descriptions',
      'resources[0].token_format: must be opaque or jwt',
      'resources[0].introspectors[0]: no client nope',
    ])
    expect(await exportState(t.store)).toEqual({ clients: [], groups: [], users: [], resources: [], sites: [], providers: [] })
  })

  test('a secret file readable by others is refused; a public client cannot turn confidential', async () => {
    expect(await errorsOf({ clients: [{ client_id: 'x', name: 'X', redirect_uris: ['https://x.example/cb'], secret_file: 'open.secret' }] })).toEqual([
      `clients[0].secret_file: ${join(dir, 'open.secret')} is readable by others (chmod 600 it)`,
    ])
    await (await plan({ clients: [{ client_id: 'pub', name: 'P', redirect_uris: ['https://p.example/cb'], public: true }] })).apply()
    expect(await errorsOf({ clients: [{ client_id: 'pub', name: 'P', redirect_uris: ['https://p.example/cb'], public: false }] })).toEqual([
      'clients[0].public: pub is public; delete it to change that',
    ])
    expect(() => parseDocument('clients: [', 'broken.yaml')).toThrow(/^broken\.yaml: not valid YAML or JSON \(/)
  })

  test('--prune refuses to delete a group an app still allows, naming it; a member pruned loses their tokens at the app', async () => {
    await (await plan(parseDocument(YAML, 'latchkey.yaml'))).apply()
    const ada = (await t.store.users.listUsers())[0]!
    const token = await mintToken(t, 'grafana', ada.id, 'openid')
    // No clients section: grafana stays, and still allows only family.
    expect(await errorsOf({ groups: [] }, true)).toEqual(['groups: family is absent, but the allowed_groups of grafana name it; pruning it would open those apps to everyone'])
    expect((await t.store.groups.listGroups()).map((g) => g.name)).toEqual(['family'])
    // Pruning Ada out of family ends her grant at grafana (in the membership change's transaction).
    const members = await plan({ groups: [{ name: 'family', members: [] }] }, true)
    expect(members.lines).toEqual(['- member ada@example.com of family'])
    await t.store.transaction(() => members.apply())
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
    // The file's grafana allows no group any more: then family may go.
    const doc = parseDocument(YAML.replace('allowed_groups: [family]', 'allowed_groups: []'), 'f.yaml') as Record<string, unknown>
    const opened = await plan({ ...doc, groups: [] }, true)
    expect(opened.lines).toContain('- group family')
    await opened.apply()
    expect(await t.store.groups.listGroups()).toEqual([])
  })

  test('introspects: applied, refused for unknown clients, "*" beside ids and public clients; exported so export → apply is a no-op', async () => {
    const rs = { client_id: 'dovecot', name: 'Dovecot', redirect_uris: ['https://mail.example/cb'] }
    expect(await errorsOf({ clients: [{ ...rs, introspects: ['nope'] }, { ...rs, client_id: 'b', introspects: ['*', 'dovecot'] }, { ...rs, client_id: 'c', public: true, introspects: ['*'] }] })).toEqual([
      `clients[1].introspects: '*' (every client's tokens) stands alone, not beside client ids`,
      'clients[2].introspects: a public client cannot introspect tokens',
      'clients[0].introspects[0]: no client nope',
    ])
    await (await plan(parseDocument(YAML, 'latchkey.yaml'))).apply()
    const p = await plan({ clients: [{ ...rs, introspects: ['grafana'] }] })
    expect(p.lines).toEqual(['+ client dovecot'])
    await p.apply()
    expect((await t.store.clients.findClient('dovecot'))!.introspects).toEqual(['grafana'])
    const changed = await plan({ clients: [{ ...rs, introspects: ['*'] }] })
    expect(changed.lines).toEqual(['~ client dovecot: introspects'])
    await changed.apply()
    expect((await t.store.clients.findClient('dovecot'))!.introspects).toEqual(['*'])
    const exported = JSON.parse(JSON.stringify(await exportState(t.store)))
    expect(exported.clients.find((c: { client_id: string }) => c.client_id === 'dovecot').introspects).toEqual(['*'])
    expect((await plan(exported)).lines).toEqual([])
  })

  test('backchannel_logout_uri: applied, checked as for the CLI, changed and removed; exported so export → apply is a no-op', async () => {
    const wiki = { client_id: 'wiki', name: 'Wiki', redirect_uris: ['https://wiki.example/cb'] }
    expect(await errorsOf({ clients: [{ ...wiki, backchannel_logout_uri: 'http://wiki.example/bc' }, { ...wiki, client_id: 'w2', backchannel_logout_session_required: true }] })).toEqual([
      'clients[0].backchannel_logout_uri: back-channel logout URI "http://wiki.example/bc" must be https:// (or http:// on a loopback address)',
      'clients[1].backchannel_logout_session_required: needs backchannel_logout_uri',
    ])
    const made = await plan({ clients: [{ ...wiki, backchannel_logout_uri: 'https://wiki.example/bc', backchannel_logout_session_required: true }] })
    expect(made.lines).toEqual(['+ client wiki'])
    await made.apply()
    expect(await t.store.clients.findClient('wiki')).toMatchObject({ backchannelLogoutUri: 'https://wiki.example/bc', backchannelLogoutSessionRequired: true })
    const exported = JSON.parse(JSON.stringify(await exportState(t.store)))
    expect(exported.clients.find((c: { client_id: string }) => c.client_id === 'wiki')).toMatchObject({ backchannel_logout_uri: 'https://wiki.example/bc', backchannel_logout_session_required: true })
    expect((await plan(exported)).lines).toEqual([])
    const removed = await plan({ clients: [wiki] })
    expect(removed.lines).toEqual(['~ client wiki: backchannel_logout_uri'])
    await removed.apply()
    expect(await t.store.clients.findClient('wiki')).toMatchObject({ backchannelLogoutUri: null, backchannelLogoutSessionRequired: false })
  })

  test('machines (issue 38): grant_types, allowed_scopes (a resource of the same file), require_pushed_authorization_requests, private_key_jwt with jwks or jwks_uri — applied, checked as for the CLI, exported so export → apply is a no-op', async () => {
    const jwk = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }
    const job = { client_id: 'nightly', name: 'Nightly job', grant_types: ['client_credentials'], allowed_scopes: ['reports:read'], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } }
    const reports = { uri: 'https://reports.example', name: 'Reports', scopes: { 'reports:read': 'Read reports' } }
    const tv = { client_id: 'tv', name: 'TV', public: true, grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] }
    const web = { client_id: 'web', name: 'Web', redirect_uris: ['https://web.example/cb'], require_pushed_authorization_requests: true }
    expect(
      await errorsOf({
        clients: [
          { ...job, allowed_scopes: ['nope:read'] },
          { ...tv, client_id: 'tv2', grant_types: ['client_credentials'] },
          { ...job, client_id: 'j2', jwks: { keys: [{ ...jwk, d: 'private' }] } },
          { ...job, client_id: 'j3', grant_types: ['password'] },
          { ...web, client_id: 'w2', redirect_uris: [] },
          { ...job, client_id: 'j4', jwks: undefined, jwks_uri: 'ftp://keys.example' },
        ],
        resources: [reports],
      }),
    ).toEqual([
      'clients[1].grant_types: a public client cannot use client_credentials (it has no secret to authenticate with)',
      'clients[2].token_endpoint_auth_method: key "k1" is a private or secret key; give the public keys only',
      'clients[3].grant_types: --grant must be one of authorization_code, client_credentials, urn:ietf:params:oauth:grant-type:device_code, got "password"',
      'clients[4].redirect_uris: must list at least one redirect URI',
      'clients[5].token_endpoint_auth_method: --jwks-uri must be an https URL, got "ftp://keys.example"',
      'clients[0].allowed_scopes[0]: nope:read is not a scope of a resource (in the database or in resources)',
    ])
    expect(await t.store.clients.findClient('nightly')).toBeUndefined()
    const made = await plan({ clients: [job, tv, web], resources: [reports] })
    expect(made.lines).toEqual(['+ client nightly', '+ client tv', '+ client web', '+ resource https://reports.example'])
    const out = await made.apply()
    // A private_key_jwt client has keys, no secret to show.
    expect(out.filter((line) => line.startsWith('client nightly'))).toEqual(['client nightly (Nightly job) created'])
    expect(await t.store.clients.findClient('nightly')).toMatchObject({ grantTypes: ['client_credentials'], allowedScopes: ['reports:read'], authMethod: 'private_key_jwt', secretHash: null, jwks: JSON.stringify({ keys: [jwk] }), redirectUris: [] })
    expect(await t.store.clients.findClient('tv')).toMatchObject({ grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'], requirePar: false })
    expect((await t.store.clients.findClient('web'))!.requirePar).toBe(true)
    const exported = JSON.parse(JSON.stringify(await exportState(t.store)))
    const byId = (id: string) => exported.clients.find((c: { client_id: string }) => c.client_id === id)
    expect(byId('nightly')).toMatchObject({ grant_types: ['client_credentials'], allowed_scopes: ['reports:read'], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] }, require_pushed_authorization_requests: false })
    expect(byId('tv')).toMatchObject({ token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] })
    expect(byId('web')).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code'], require_pushed_authorization_requests: true })
    expect((await plan(exported)).lines).toEqual([])
    // A file that does not say keeps what the app has; one that does changes it.
    expect((await plan({ clients: [{ client_id: 'nightly', name: 'Nightly job' }] })).lines).toEqual([])
    const moved = await plan({ clients: [{ ...job, jwks: undefined, jwks_uri: 'https://keys.example/jwks.json' }, { ...web, require_pushed_authorization_requests: false }] })
    expect(moved.lines).toEqual(['~ client nightly: token_endpoint_auth_method', '~ client web: require_pushed_authorization_requests'])
    await moved.apply()
    expect(await t.store.clients.findClient('nightly')).toMatchObject({ jwks: null, jwksUri: 'https://keys.example/jwks.json' })
    expect((await t.store.clients.findClient('web'))!.requirePar).toBe(false)
    // Keys to a secret needs the secret.
    expect(await errorsOf({ clients: [{ ...job, token_endpoint_auth_method: 'client_secret_basic', jwks: undefined }] })).toEqual([
      'clients[0].secret_file: nightly authenticates with private_key_jwt and has no secret; give secret_file to move it to a secret',
    ])
  })

  test('apply is one transaction: a step that fails part-way leaves none of the changes before it', async () => {
    const planned = await plan({ groups: [{ name: 'family', members: [] }], users: [{ email: 'late@example.com', full_name: 'Late' }] })
    expect(planned.lines).toEqual(['+ group family', '+ user late@example.com (invited)'])
    // Someone takes the address between the plan and its steps (the CLI plans inside the transaction; this is the backstop).
    await addUser(t, 'late@example.com', 'Early')
    await expect(t.store.transaction(() => planned.apply())).rejects.toThrow('an account with this email already exists')
    expect(await t.store.groups.listGroups()).toEqual([])
    // The store works on afterwards, and a transaction that succeeds commits everything.
    await t.store.transaction(async () => {
      await t.store.groups.createGroup('one', 0)
      await t.store.groups.createGroup('two', 0)
    })
    expect((await t.store.groups.listGroups()).map((g) => g.name)).toEqual(['one', 'two'])
  })

  test('without --prune apply only adds and changes: group members, redirect URIs and scopes absent from the file stay; with --prune they go', async () => {
    await (await plan(parseDocument(YAML, 'latchkey.yaml'))).apply()
    const bob = await addUser(t, 'bob@example.com', 'Bob')
    await t.store.groups.addMember('family', bob.id)
    const grafana = (await t.store.clients.findClient('grafana'))!
    await t.store.clients.updateClient('grafana', { ...grafana, redirectUris: [...grafana.redirectUris, 'https://grafana.example.com/other'], postLogoutRedirectUris: ['https://grafana.example.com/login'] })
    const mcp = (await t.store.resources.findResource('https://mcp.example.com'))!
    await t.store.resources.updateResource({ ...mcp, scopes: { ...mcp.scopes, 'tools:call': 'Run tools' } })

    // The file as it was, plus one of each: only the additions are planned.
    const more = YAML.replace('members: [ada@example.com]', 'members: [ada@example.com, cy@example.com]')
      .replace('redirect_uris: [https://grafana.example.com/login/generic_oauth]', 'redirect_uris: [https://grafana.example.com/new]')
      .replace('scopes: { "tools:read": Read your tools }', 'scopes: { "tools:write": Write your tools }')
      .replace('users:\n', 'users:\n  - email: cy@example.com\n    full_name: Cy\n')
    const kept = await plan(parseDocument(YAML, 'latchkey.yaml'))
    expect(kept.lines).toEqual([])
    const added = await plan(parseDocument(more, 'more.yaml'))
    expect(added.lines).toEqual(['+ user cy@example.com (invited)', '+ member cy@example.com of family', '~ client grafana: redirect_uris', '~ resource https://mcp.example.com'])
    await added.apply()
    expect((await t.store.groups.listGroups()).find((g) => g.name === 'family')!.members.map((m) => m.email).sort()).toEqual(['ada@example.com', 'bob@example.com', 'cy@example.com'])
    expect(await t.store.clients.findClient('grafana')).toMatchObject({
      redirectUris: ['https://grafana.example.com/login/generic_oauth', 'https://grafana.example.com/other', 'https://grafana.example.com/new'],
      postLogoutRedirectUris: ['https://grafana.example.com/login'],
    })
    expect((await t.store.resources.findResource('https://mcp.example.com'))!.scopes).toEqual({ 'tools:read': 'Read your tools', 'tools:call': 'Run tools', 'tools:write': 'Write your tools' })
    expect((await plan(parseDocument(more, 'more.yaml'))).lines).toEqual([])

    // --prune: the file is the whole truth of the sections it has.
    const pruned = await plan(parseDocument(more, 'more.yaml'), true)
    expect(pruned.lines).toEqual(['- member bob@example.com of family', '~ client grafana: redirect_uris, post_logout_redirect_uris', '~ resource https://mcp.example.com', '- user bob@example.com'])
    await pruned.apply()
    expect((await t.store.groups.listGroups()).find((g) => g.name === 'family')!.members.map((m) => m.email).sort()).toEqual(['ada@example.com', 'cy@example.com'])
    expect(await t.store.clients.findClient('grafana')).toMatchObject({ redirectUris: ['https://grafana.example.com/new'], postLogoutRedirectUris: [] })
    expect((await t.store.resources.findResource('https://mcp.example.com'))!.scopes).toEqual({ 'tools:write': 'Write your tools' })
  })

  test('users[].disabled is exported and applied: disabling ends the user’s sessions and tokens at once; a file without it re-enables nobody', async () => {
    const app = await addClient(t)
    const ann = await addUser(t, 'ann@example.com', 'Ann')
    const jar = await signIn(t, 'ann@example.com')
    // Not asked before: a cached token hears of a disabling by another process through the change feed (the CLI's case, tests/e2e/cluster).
    const token = await mintToken(t, app.client.id, ann.id, 'profile')
    expect(await errorsOf({ users: [{ email: 'ann@example.com', full_name: 'Ann', disabled: 'yes' }] })).toEqual(['users[0].disabled: must be true or false'])

    const off = await plan({ users: [{ email: 'ann@example.com', full_name: 'Ann', disabled: true }, { email: 'new@example.com', full_name: 'New', disabled: true }] })
    expect(off.lines).toEqual(['~ user ann@example.com: disabled', '+ user new@example.com (invited, disabled)'])
    await t.store.transaction(() => off.apply())
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
    expect((await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).status).toBe(303)
    for (const table of ['sessions', 'access_tokens', 'refresh_tokens', 'refresh_families']) expect(await t.rows(`SELECT user_id FROM ${table}`)).toEqual([])
    expect(((await exportState(t.store)).users as Array<{ email: string; full_name: string; admin: boolean; disabled: boolean }>).sort((x, y) => x.email.localeCompare(y.email))).toEqual([
      { email: 'ann@example.com', full_name: 'Ann', admin: false, disabled: true },
      { email: 'new@example.com', full_name: 'New', admin: false, disabled: true },
    ])

    expect((await plan({ users: [{ email: 'ann@example.com', full_name: 'Ann' }] })).lines).toEqual([])
    const on = await plan({ users: [{ email: 'ann@example.com', full_name: 'Ann', disabled: false }] })
    expect(on.lines).toEqual(['~ user ann@example.com: disabled'])
    await on.apply()
    expect((await t.store.users.listUsers()).map((u) => [u.email, u.disabled]).sort()).toEqual([['ann@example.com', false], ['new@example.com', true]])
  })

  test('export as YAML reads back as what it exports, and applies as a no-op', async () => {
    await (await plan(parseDocument(YAML, 'latchkey.yaml'))).apply()
    await addUser(t, 'odd@example.com', 'Null: #1 "yes" é')
    const exported = await exportState(t.store)
    const yaml = toYaml(exported)
    expect(yaml).toContain('\n  - client_id: grafana\n    name: Grafana\n    redirect_uris:\n      - https://grafana.example.com/login/generic_oauth\n    post_logout_redirect_uris: []\n')
    expect(yaml).toContain('\n  - email: ada@example.com\n    full_name: Ada\n    admin: true\n    disabled: false\n')
    expect(yaml).toContain('\n  - email: odd@example.com\n    full_name: "Null: #1 \\"yes\\" é"\n    admin: false\n    disabled: false\n')
    expect(Bun.YAML.parse(yaml)).toEqual(exported)
    expect((await plan(parseDocument(yaml, 'exported.yaml'), true)).lines).toEqual([])
    // What YAML would read as another type, or a terminal would act on, is a quoted JSON string (\u escapes).
    const odd = ['true', 'No', '~', 'null', '123', '1e3', '.inf', '0x1f', '- x', '@a', 'a: b', 'a #b', 'x:', ' x', '', 'a\u009b[31mb', 'r\u202eL', 'line\nbreak']
    const written = toYaml({ members: odd })
    expect(written).toBe(`members:\n${odd.map((s) => `  - ${JSON.stringify(s).replace('\u009b', '\\u009b').replace('\u202e', '\\u202e')}\n`).join('')}`)
    expect(Bun.YAML.parse(written)).toEqual({ members: odd })
  })
})

describe('providers: in apply and export (SPEC "Sign in with another account")', () => {
  const PROVIDER_SECRET = 'acme-provider-secret-0123456789'
  writeFileSync(join(dir, 'acme.secret'), `${PROVIDER_SECRET}\n`, { mode: 0o600 })
  writeFileSync(join(dir, 'acme2.secret'), `${PROVIDER_SECRET}-2\n`, { mode: 0o600 })
  writeFileSync(join(dir, 'acme-open.secret'), PROVIDER_SECRET)
  chmodSync(join(dir, 'acme-open.secret'), 0o644)
  const ACME = { id: 'acme', name: 'Acme', issuer: 'https://sso.acme.example', client_id: 'latchkey', secret_file: 'acme.secret', link_verified_email: true, allowed_domains: ['acme.example'] }

  test('added by id with its secret by file (sealed), changed per field, a new secret only by file; export has no secret and re-applies as a no-op; --prune deletes', async () => {
    const first = await plan({ providers: [ACME] })
    expect(first.lines).toEqual(['+ provider acme'])
    await first.apply()
    const stored = (await t.store.providers.findProvider('acme'))!
    expect(stored).toMatchObject({ name: 'Acme', kind: 'oidc', issuer: 'https://sso.acme.example', clientId: 'latchkey', linkVerifiedEmail: true, allowedDomains: ['acme.example'] })
    expect(stored.clientSecretSealed).not.toContain(PROVIDER_SECRET)
    expect((await plan({ providers: [ACME] })).lines).toEqual([])

    const exported = await exportState(t.store)
    expect(exported.providers).toEqual([
      { id: 'acme', name: 'Acme', kind: 'oidc', issuer: 'https://sso.acme.example', client_id: 'latchkey', scope: 'openid email profile', allow_create: false, allowed_domains: ['acme.example'], link_verified_email: true, trust_mfa: false },
    ])
    expect(JSON.stringify(exported)).not.toContain(PROVIDER_SECRET)
    expect((await plan(parseDocument(toYaml(exported), 'exported.yaml'))).lines).toEqual([])

    const changed = await plan({ providers: [{ ...ACME, name: 'Acme SSO', allow_create: true, secret_file: 'acme2.secret' }] })
    expect(changed.lines).toEqual(['~ provider acme: name, allow_create, secret'])
    await changed.apply()
    expect((await plan({ providers: [] }, true)).lines).toEqual(['- provider acme: nobody is connected through it'])
  })

  test('--prune deleting a provider names, in the plan, who is connected and who will have to reset their password by email', async () => {
    await (await plan({ providers: [ACME] })).apply()
    const origin = { kind: 'oidc' as const, issuer: 'https://sso.acme.example', apiUrl: null }
    const ann = await addUser(t, 'ann@example.com', 'Ann')
    expect(await t.store.providers.linkIdentity({ providerId: 'acme', subject: 'ann', userId: ann.id, email: null, origin }, t.clock.now())).toBe('linked')
    await t.store.providers.createWithIdentity({ id: 'bob-id', email: 'bob@example.com', fullName: 'Bob', avatarUrl: null, emailVerified: true, passwordHash: '' }, { providerId: 'acme', subject: 'bob', email: null, origin }, t.clock.now())
    const pruned = await plan({ providers: [] }, true)
    expect(pruned.lines).toEqual(['- provider acme: 2 people are connected through it; 1 of them has no password or passkey and will have to reset their password by email to sign in again'])
    // --prune is the consent: the plan applies as shown.
    await pruned.apply()
    expect([await t.store.providers.listProviders(), await t.store.providers.listIdentities('bob-id')]).toEqual([[], []])
  })

  test('a new provider needs its secret file, only its owner may read it, and bad settings are refused with their paths', async () => {
    const { secret_file: _, ...noSecret } = ACME
    expect(await errorsOf({ providers: [noSecret, { ...ACME, id: 'open', secret_file: 'acme-open.secret' }, { ...ACME, id: 'plain', issuer: 'http://sso.acme.example' }, { ...ACME, color: 'red' }] })).toEqual([
      'providers[0].secret_file: is required for a new provider',
      `providers[1].secret_file: ${join(dir, 'acme-open.secret')} is readable by others (chmod 600 it)`,
      'providers[2]: issuer must be https:// (plain http only for a host in CLIENT_ID_METADATA_ALLOW_HOSTS)',
      'providers[3].color: unknown key',
      'providers[3].id: acme is listed twice',
    ])
    expect(await t.store.providers.listProviders()).toEqual([])
  })
})
