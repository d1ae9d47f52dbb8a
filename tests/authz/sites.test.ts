import { beforeEach, describe, expect, test } from 'bun:test'
import { GroupInUse, createGroup, deleteGroup } from '../../src/accounts/groups'
import { SiteInputError, addSiteRule, createSite, toSiteView } from '../../src/authz/sites'
import { createTestApp, type TestApp } from '../helpers'

let t: TestApp
beforeEach(async () => {
  t = await createTestApp()
})

describe('sites (forward-auth)', () => {
  test('a group a site names cannot be deleted: refused, naming the site (an allow-list never becomes everyone)', async () => {
    await createGroup(t.store, 'family', t.clock.now())
    await createGroup(t.store, 'other', t.clock.now())
    await createSite(t.store, { host: 'photos.example.com', name: 'Photos', allowedGroups: ['family'] }, t.clock.now())
    const refused = deleteGroup(t.store, 'family')
    await expect(refused).rejects.toBeInstanceOf(GroupInUse)
    await expect(refused).rejects.toThrow('group "family" is the allowed group of site Photos (photos.example.com): change their allowed groups first (deleting it would open them to everyone)')
    expect((await t.store.groups.listGroups()).map((g) => g.name)).toEqual(['family', 'other'])
    expect(await deleteGroup(t.store, 'other')).toBe(true)
  })

  test('create (host lower-cased, policy one-factor by default, groups sorted), rules appended in order, list, delete', async () => {
    await createGroup(t.store, 'staff', t.clock.now())
    await createGroup(t.store, 'family', t.clock.now())
    await createSite(t.store, { host: 'Photos.Example.COM', name: ' Photos ', allowedGroups: ['staff', 'family', 'staff'], jwt: true }, t.clock.now())
    await createSite(t.store, { host: '*.example.org', name: 'Wiki', policy: 'two-factor' }, t.clock.now() + 1)
    await addSiteRule(t.store, 'photos.example.com', { paths: ['^/public/'], methods: ['get', 'HEAD'], policy: 'bypass' })
    await addSiteRule(t.store, 'PHOTOS.example.com', { networks: ['10.0.0.0/8', '::1'], clients: ['robot'], policy: 'one-factor' })
    expect((await t.store.sites.listSites()).map(toSiteView)).toEqual([
      {
        host: 'photos.example.com',
        name: 'Photos',
        policy: 'one-factor',
        allowed_groups: ['family', 'staff'],
        jwt: true,
        rules: [
          { paths: ['^/public/'], methods: ['GET', 'HEAD'], networks: [], clients: [], policy: 'bypass' },
          { paths: [], methods: [], networks: ['10.0.0.0/8', '::1'], clients: ['robot'], policy: 'one-factor' },
        ],
      },
      { host: '*.example.org', name: 'Wiki', policy: 'two-factor', allowed_groups: [], jwt: false, rules: [] },
    ])
    expect((await t.store.sites.findSites(['a.example.org', '*.example.org'])).map((s) => s.host)).toEqual(['*.example.org'])
    expect(await t.store.sites.deleteSite('*.example.org')).toBe(true)
    expect(await t.store.sites.deleteSite('*.example.org')).toBe(false)
    expect((await t.store.sites.listSites()).map((s) => s.host)).toEqual(['photos.example.com'])
  })

  test('bad input is refused with a message and changes nothing', async () => {
    const refused = async (p: Promise<unknown>, message: string) => {
      const error = await p.then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(SiteInputError)
      expect((error as Error).message).toBe(message)
    }
    for (const host of ['photos.example.com:443', 'https://photos.example.com', '*', '*.', 'a..b', '*.*.example.com', 'ex ample.com', '', 'a_b.example.com', 'photos.example.com/x'])
      await refused(createSite(t.store, { host, name: 'X' }, 1), `host "${host}" must be a DNS name without port (photos.example.com), or *.example.com for its subdomains`)
    await refused(createSite(t.store, { host: 'x.example.com', name: 'X', policy: 'two-factors' }, 1), '--policy must be one of one-factor, two-factor, bypass, deny, got "two-factors"')
    await refused(createSite(t.store, { host: 'x.example.com', name: 'X', allowedGroups: ['nobody'] }, 1), 'no group named "nobody"')
    await refused(createSite(t.store, { host: 'x.example.com', name: '\u0007' }, 1), '--name must be 1 to 200 characters, without control or invisible characters')
    await createSite(t.store, { host: 'x.example.com', name: 'X' }, 1)
    await refused(createSite(t.store, { host: 'X.example.com', name: 'Again' }, 1), 'a site for "x.example.com" exists already')
    await refused(addSiteRule(t.store, 'x.example.com', { paths: ['('], policy: 'deny' }), '--path "(" is not a regular expression')
    for (const path of ['^/(?=admin)', '^/(a)\\1', '^/v{1001}'])
      await refused(
        addSiteRule(t.store, 'x.example.com', { paths: ['^/ok/', path], policy: 'deny' }),
        `--path "${path}" is JavaScript syntax that RE2 does not read (a look-around, a back-reference, a \\u escape, a repetition count over 1000): paths are matched in linear time, with RE2's syntax, as Authelia's are`,
      )
    await refused(addSiteRule(t.store, 'x.example.com', { methods: ['GE T'], policy: 'deny' }), '--method "GE T" is not an HTTP method')
    await refused(addSiteRule(t.store, 'x.example.com', { networks: ['10.0.0.0/33'], policy: 'deny' }), '--network "10.0.0.0/33" is not an IP address or CIDR block')
    await refused(addSiteRule(t.store, 'x.example.com', { networks: ['10.0.0.1,10.0.0.2'], policy: 'deny' }), '--network "10.0.0.1,10.0.0.2": one block per --network')
    await refused(addSiteRule(t.store, 'x.example.com', { paths: ['^/'] }), '--policy is required (one-factor, two-factor, bypass, deny)')
    await refused(addSiteRule(t.store, 'y.example.com', { policy: 'deny' }), 'no site for "y.example.com"')
    expect((await t.store.sites.listSites()).map(toSiteView)).toEqual([{ host: 'x.example.com', name: 'X', policy: 'one-factor', allowed_groups: [], jwt: false, rules: [] }])
  })
})
