import { describe, expect, test } from 'bun:test'
import { decide } from '../../src/authz/decide'
import { compilePathPattern, pathPatternOf } from '../../src/authz/path-pattern'
import type { SiteRecord, SiteRule } from '../../src/db/store'

const site = (paths: string[]): SiteRecord => ({
  host: 'photos.example.com',
  name: 'Photos',
  policy: 'deny',
  allowedGroups: [],
  jwt: false,
  rules: [{ paths, methods: [], networks: [], clients: [], policy: 'bypass' } satisfies SiteRule],
})
const get = (path: string) => ({ method: 'GET', path, address: '203.0.113.7' })

describe("site rules' paths: RE2, matched in time linear in the path", () => {
  test('patterns that make a backtracking engine take seconds to minutes are decided in milliseconds on crafted paths that miss', () => {
    // With JavaScript's RegExp (measured in Bun): ^/(a+)+$ ~0.5 s on 30 characters, doubling with each
    // more (~4 s here, each); the .* one 463 ms on 2,002 characters, cubic (~30 s here). Sized so a
    // return to a backtracking engine fails the bound below instead of hanging the run.
    const crafted: Array<[string, string]> = [
      ['^/(a+)+$', '/' + 'a'.repeat(32) + '!'],
      ['^/.*/.*/.*\\.php$', '/' + 'a/'.repeat(3999) + 'x'],
      ['^/(a|a)*$', '/' + 'a'.repeat(32) + '!'],
      ['(x+x+)+y', 'x'.repeat(33)],
    ]
    const started = performance.now()
    for (const [pattern, path] of crafted) expect([pattern, decide(site([pattern]), get(path), undefined)]).toEqual([pattern, 'deny'])
    expect(performance.now() - started).toBeLessThan(2000)
    expect(decide(site(['^/(a+)+$']), get('/aaaa'), undefined)).toBe('allow')
  })

  test('the patterns operators write answer as JavaScript’s RegExp did, on paths that match and paths that do not', () => {
    const patterns = ['^/public/', '^/api/v[0-9]+/users$', '\\.(jpg|png|gif)$', '^/files(/[^/]*)*$', '^/([^/]+/)*[^/]+$', '^/static/.*\\.css$', '^/admin', 'health', '^/$', '^/api/\\w+/\\d{2,}$', '^/(en|de)/docs/', '^/caf\u00e9/']
    const paths = ['/', '/public/a.jpg', '/public', '/api/v2/users', '/api/v2/users/1', '/x/y/z.png', '/files', '/files/a/b', '/static/x/y.css', '/admin/', '/administrator', '/healthz', '/api/ab/123', '/api/a-b/12', '/de/docs/x', '/caf\u00e9/menu', '/a/b/']
    for (const pattern of patterns) {
      const re2 = pathPatternOf(pattern)
      const js = new RegExp(pattern)
      expect([pattern, paths.filter((p) => re2.test(p))]).toEqual([pattern, paths.filter((p) => js.test(p))])
    }
  })

  test('RE2 syntax JavaScript lacks is read (Authelia’s rules move as they are); what only a backtracking engine reads is told apart from what no engine reads', () => {
    expect(pathPatternOf('(?i)^/public/').test('/PUBLIC/x')).toBe(true)
    expect(pathPatternOf('^/[[:digit:]]+$').test('/2026')).toBe(true)
    expect(pathPatternOf('^/(?P<year>\\d{4})/').test('/2026/11')).toBe(true)
    for (const source of ['^/(?=admin)', '^/(?!public)', '(?<=/)x', '^/(a)\\1', '^/caf\\u00e9', '^/x{1001}']) expect([source, compilePathPattern(source)]).toEqual([source, 'unsupported'])
    for (const source of ['(', '^/[a-', 'a{2,1}', '*x']) expect([source, compilePathPattern(source)]).toEqual([source, 'syntax'])
  })

  test('a rule stored before RE2 whose pattern only JavaScript reads (a look-ahead) still matches as it did', () => {
    expect(decide(site(['^/(?!private/)']), get('/public/x'), undefined)).toBe('allow')
    expect(decide(site(['^/(?!private/)']), get('/private/x'), undefined)).toBe('deny')
  })
})
