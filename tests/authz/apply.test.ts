import { beforeEach, describe, expect, test } from 'bun:test'
import { ApplyError, exportState, parseDocument, planApply } from '../../src/admin/declarative'
import { createSite, toSiteView } from '../../src/authz/sites'
import { toYaml } from '../../src/lib/yaml'
import { createTestApp, type TestApp } from '../helpers'

let t: TestApp
beforeEach(async () => {
  t = await createTestApp()
})

const plan = (doc: unknown, prune = false) => planApply(t.store, t.config, doc, { prune, baseDir: '/', now: t.clock.now() })
const errorsOf = (doc: unknown) => plan(doc).then(() => [], (e: unknown) => (e as ApplyError).errors)

const photos = {
  host: 'photos.example.com',
  name: 'Photos',
  policy: 'one-factor' as const,
  allowed_groups: ['family'],
  jwt: true,
  rules: [
    { paths: ['^/public/'], methods: ['GET'], policy: 'bypass' },
    { networks: ['10.0.0.0/8'], clients: ['robot'], policy: 'one-factor' },
  ],
}

describe('apply / export: sites', () => {
  test('sites are created, changed (rules replaced as one ordered list) and, with --prune, deleted; twice changes nothing; export → apply is a no-op', async () => {
    const doc = { groups: [{ name: 'family' }], sites: [photos, { host: '*.example.org', name: 'Wikis', policy: 'two-factor' }] }
    const first = await plan(doc)
    expect(first.lines).toEqual(['+ group family', '+ site photos.example.com', '+ site *.example.org'])
    await first.apply()
    // Created in one millisecond: listed by host.
    expect((await t.store.sites.listSites()).map(toSiteView)).toEqual([
      { host: '*.example.org', name: 'Wikis', policy: 'two-factor', allowed_groups: [], jwt: false, rules: [] },
      { ...photos, rules: [{ paths: ['^/public/'], methods: ['GET'], networks: [], clients: [], policy: 'bypass' }, { paths: [], methods: [], networks: ['10.0.0.0/8'], clients: ['robot'], policy: 'one-factor' }] },
    ])
    expect((await plan(doc)).lines).toEqual([])
    const exported = parseDocument(toYaml(await exportState(t.store)), 'export.yaml')
    expect((await plan(exported, true)).lines).toEqual([])

    const reordered = { sites: [{ ...photos, jwt: false, rules: [photos.rules[1], photos.rules[0]] }] }
    const second = await plan(reordered)
    expect(second.lines).toEqual(['~ site photos.example.com: jwt, rules'])
    await second.apply()
    expect((await t.store.sites.findSites(['photos.example.com']))[0]!.rules.map((r) => r.policy)).toEqual(['one-factor', 'bypass'])
    const pruned = await plan(reordered, true)
    expect(pruned.lines).toEqual(['- site *.example.org'])
    await pruned.apply()
    expect((await t.store.sites.listSites()).map((s) => s.host)).toEqual(['photos.example.com'])
  })

  test('an invalid site: every error with its path, and nothing changes', async () => {
    await createSite(t.store, { host: 'kept.example.com', name: 'Kept' }, t.clock.now())
    const errors = await errorsOf({
      sites: [
        { host: 'bad host', name: '', policy: 'maybe', allowed_groups: ['ghosts'], color: 'red', rules: [{ paths: ['('], policy: 'deny' }, { methods: ['G T'], policy: 'deny' }, { paths: ['^/'] }, { policy: 'allow' }] },
        { host: 'kept.example.com', name: 'Kept', rules: 'all' },
        { host: 'KEPT.example.com', name: 'Again' },
      ],
    })
    expect(errors).toEqual([
      'sites[0].color: unknown key',
      'sites[0].host: host "bad host" must be a DNS name without port (photos.example.com), or *.example.com for its subdomains',
      'sites[0].name: must be a non-empty string',
      'sites[0].policy: --policy must be one of one-factor, two-factor, bypass, deny, got "maybe"',
      'sites[0].allowed_groups[0]: no group ghosts (in the database or in groups)',
      'sites[0].rules[0]: --path "(" is not a regular expression',
      'sites[0].rules[1]: --method "G T" is not an HTTP method',
      'sites[0].rules[2].policy: must be a non-empty string',
      'sites[0].rules[3]: --policy must be one of one-factor, two-factor, bypass, deny, got "allow"',
      'sites[1].rules: must be a list',
      'sites[2].host: kept.example.com is listed twice',
    ])
    expect((await t.store.sites.listSites()).map(toSiteView)).toEqual([{ host: 'kept.example.com', name: 'Kept', policy: 'one-factor', allowed_groups: [], jwt: false, rules: [] }])
  })
})
