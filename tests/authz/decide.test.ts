import { describe, expect, test } from 'bun:test'
import { decide, siteFor, type Decision, type Identity } from '../../src/authz/decide'
import { candidateHosts, parseHostHeader, parsedHostsHeld } from '../../src/authz/hosts'
import { normaliseTarget } from '../../src/authz/path'
import type { SitePolicy, SiteRecord, SiteRule } from '../../src/db/store'

const site = (over: Partial<SiteRecord> = {}): SiteRecord => ({ host: 'photos.example.com', name: 'Photos', policy: 'one-factor', allowedGroups: [], jwt: false, rules: [], ...over })
const rule = (over: Partial<SiteRule>): SiteRule => ({ paths: [], methods: [], networks: [], clients: [], policy: 'deny', ...over })
const get = (path = '/', address = '203.0.113.7', method = 'GET') => ({ method, path, address })
const ann: Identity = { kind: 'user', groups: ['family'], twoFactor: false }
const annMfa: Identity = { kind: 'user', groups: ['family'], twoFactor: true }
const robot: Identity = { kind: 'client', clientId: 'robot' }

describe('the decision: policies', () => {
  const cases: Array<[SitePolicy, Identity, Decision]> = [
    ['bypass', undefined, 'allow'],
    ['bypass', ann, 'allow'],
    ['bypass', robot, 'allow'],
    ['deny', undefined, 'deny'],
    ['deny', annMfa, 'deny'],
    ['deny', robot, 'deny'],
    ['one-factor', undefined, 'sign-in'],
    ['one-factor', ann, 'allow'],
    ['one-factor', annMfa, 'allow'],
    ['one-factor', robot, 'allow'],
    ['two-factor', undefined, 'sign-in'],
    ['two-factor', ann, 'step-up'],
    ['two-factor', annMfa, 'allow'],
    ['two-factor', robot, 'deny'],
  ]
  for (const [policy, who, expected] of cases)
    test(`${policy} for ${who === undefined ? 'nobody' : who.kind === 'client' ? 'a machine' : who.twoFactor ? 'a two-factor session' : 'a one-factor session'}: ${expected}`, () => {
      expect(decide(site({ policy }), get(), who)).toBe(expected)
    })

  test('allowed groups: a member passes, anyone else is denied (two-factor: denied before any step-up), a machine only through a rule naming it', () => {
    const s = site({ allowedGroups: ['staff', 'family'] })
    expect(decide(s, get(), ann)).toBe('allow')
    expect(decide(s, get(), { kind: 'user', groups: ['other'], twoFactor: true })).toBe('deny')
    expect(decide({ ...s, policy: 'two-factor' }, get(), { kind: 'user', groups: [], twoFactor: false })).toBe('deny')
    expect(decide({ ...s, policy: 'two-factor' }, get(), ann)).toBe('step-up')
    expect(decide(s, get(), undefined)).toBe('sign-in')
    expect(decide(s, get(), robot)).toBe('deny')
    expect(decide({ ...s, rules: [rule({ clients: ['robot'], policy: 'one-factor' })] }, get(), robot)).toBe('allow')
    expect(decide({ ...s, rules: [rule({ clients: ['robot'], policy: 'two-factor' })] }, get(), robot)).toBe('allow')
    expect(decide({ ...s, rules: [rule({ clients: ['other'], policy: 'one-factor' })] }, get(), robot)).toBe('deny')
  })
})

describe('the decision: rules', () => {
  test('the first rule that matches decides; none: the site policy', () => {
    const s = site({ policy: 'deny', rules: [rule({ paths: ['^/public/'], policy: 'bypass' }), rule({ paths: ['^/public/secret'], policy: 'one-factor' }), rule({ paths: ['^/'], policy: 'two-factor' })] })
    expect(decide(s, get('/public/secret'), undefined)).toBe('allow')
    expect(decide(s, get('/admin'), ann)).toBe('step-up')
    const reordered = { ...s, rules: [s.rules[1]!, s.rules[0]!] }
    expect(decide(reordered, get('/public/secret'), undefined)).toBe('sign-in')
    expect(decide(reordered, get('/elsewhere'), annMfa)).toBe('deny')
  })

  test('every condition a rule names must match: methods, networks (v4 and v6 blocks), clients, paths (any of them)', () => {
    const s = site({ policy: 'deny', rules: [rule({ methods: ['GET', 'HEAD'], networks: ['10.0.0.0/8', '2001:db8::/32'], paths: ['^/a$', '^/b'], policy: 'bypass' })] })
    expect(decide(s, get('/a', '10.1.2.3'), undefined)).toBe('allow')
    expect(decide(s, get('/b/c', '2001:db8::1', 'HEAD'), undefined)).toBe('allow')
    expect(decide(s, get('/a', '10.1.2.3', 'POST'), undefined)).toBe('deny')
    expect(decide(s, get('/a', '11.0.0.1'), undefined)).toBe('deny')
    expect(decide(s, get('/a', '2001:db9::1'), undefined)).toBe('deny')
    expect(decide(s, get('/a', 'unknown'), undefined)).toBe('deny')
    expect(decide(s, get('/ab', '10.1.2.3'), undefined)).toBe('deny')
    const c = site({ policy: 'deny', rules: [rule({ clients: ['robot'], policy: 'one-factor' })] })
    expect(decide(c, get(), robot)).toBe('allow')
    // A rule naming clients is never a person's.
    expect(decide(c, get(), annMfa)).toBe('deny')
    expect(decide(c, get(), { kind: 'client', clientId: 'robot2' })).toBe('deny')
  })

  test('a rule with no conditions matches everything', () => {
    expect(decide(site({ rules: [rule({ policy: 'bypass' })] }), get('/x'), undefined)).toBe('allow')
  })
})

describe('sites of a host', () => {
  const sites = [site({ host: 'photos.example.com' }), site({ host: '*.example.com', name: 'wild' }), site({ host: '*.b.example.com', name: 'nearer' })]
  test('an exact host wins over a wildcard; the nearest wildcard wins; *.example.com does not cover example.com; unknown: none', () => {
    expect(siteFor('photos.example.com', sites)?.host).toBe('photos.example.com')
    expect(siteFor('wiki.example.com', sites)?.host).toBe('*.example.com')
    expect(siteFor('a.b.example.com', sites)?.host).toBe('*.b.example.com')
    expect(siteFor('x.y.example.com', sites)?.host).toBe('*.example.com')
    expect(siteFor('example.com', sites)).toBeUndefined()
    expect(siteFor('notexample.com', sites)).toBeUndefined()
    expect(siteFor('photos.example.com.evil.net', sites)).toBeUndefined()
    expect(candidateHosts('a.b.example.com')).toEqual(['a.b.example.com', '*.b.example.com', '*.example.com', '*.com'])
    expect(candidateHosts('example.com')).toEqual(['example.com', '*.com'])
  })

  test('Host headers: name and port, lower case; anything else refused', () => {
    expect(parseHostHeader('Photos.Example.com:8443')).toEqual({ host: 'photos.example.com', port: '8443' })
    expect(parseHostHeader('photos.example.com.')).toEqual({ host: 'photos.example.com', port: '' })
    for (const bad of [null, '', 'a b', 'user@host', 'host/path', 'host:0', 'host:99999', '[::1]:80', 'a,b', 'h:80:80', '-bad.example.com']) expect(parseHostHeader(bad)).toBeUndefined()
  })

  test('a Host longer than any host and port is refused and not held (4,096 of 16 KiB once held 138 MiB)', () => {
    const before = parsedHostsHeld()
    for (let i = 0; i < 100; i++) expect(parseHostHeader(`${'a'.repeat(16_384)}${i}.example.com`)).toBeUndefined()
    expect(parsedHostsHeld()).toBe(before)
    expect(parseHostHeader(`${'a'.repeat(60)}.example.com`)).toEqual({ host: `${'a'.repeat(60)}.example.com`, port: '' })
    expect(parsedHostsHeld()).toBe(before + 1)
  })
})

describe('paths are normalised before rules see them', () => {
  const ok: Array<[string, string, string]> = [
    ['/', '/', ''],
    ['/a/b?x=1&y=%2f', '/a/b', 'x=1&y=%2f'],
    ['/public/../admin', '/admin', ''],
    ['/public/%2e%2e/admin', '/admin', ''],
    ['/public/%2E%2E/admin', '/admin', ''],
    ['/public/.%2e/admin', '/admin', ''],
    ['/./admin/.', '/admin/', ''],
    ['/a/b/..', '/a/', ''],
    ['/../../admin', '/admin', ''],
    ['//admin', '/admin', ''],
    ['/public//../admin', '/admin', ''],
    ['/caf%C3%A9', '/café', ''],
    ['/a%20b', '/a b', ''],
  ]
  for (const [raw, path, query] of ok) test(`${raw} → ${path}`, () => expect(normaliseTarget(raw)).toEqual({ path, query }))

  const refused = [
    ['an encoded slash', '/public%2f..%2fadmin'],
    ['an encoded slash (upper case)', '/public%2F..%2Fadmin'],
    ['an encoded backslash', '/public%5c..%5cadmin'],
    ['a raw backslash', '/public\\..\\admin'],
    ['an encoded NUL', '/admin%00.png'],
    ['a double encoding', '/public/%252e%252e/admin'],
    ['an invalid escape', '/a%zz'],
    ['invalid UTF-8', '/a%c3'],
    ["Tomcat's ..;", '/public/..;/admin'],
    ['a dot-segment with parameters', '/public/.;x/admin'],
    ['path parameters (Tomcat, Spring and Jetty strip them)', '/admin;a=b/x'],
    ['an encoded semicolon', '/admin%3Bx/x'],
    ['an encoded semicolon (lower case)', '/admin%3bx/x'],
    ['a semicolon in the last segment', '/admin/x;jsessionid=1'],
    ['a control character', '/a\u0001b'],
    ['a space', '/a b'],
    ['a fragment', '/a#b'],
    ['no leading slash', 'admin'],
    ['an absolute URL', 'http://evil/admin'],
    ['an empty target', ''],
    ['a target too long', '/' + 'a'.repeat(9000)],
  ] as const
  for (const [what, raw] of refused) test(`refused: ${what}`, () => expect(normaliseTarget(raw)).toBeUndefined())
})
