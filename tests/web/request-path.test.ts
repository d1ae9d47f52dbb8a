import { describe, expect, test } from 'bun:test'
import { pathOf } from '../../src/web/request-guard'

describe('the path the access log and the guard read', () => {
  test('is the path after the host, whatever the host', () => {
    expect(pathOf('http://x/zzz/account?a=1')).toBe('/zzz/account')
    expect(pathOf('http://127.0.0.1:3000/')).toBe('/')
    expect(pathOf('http://example.com')).toBe('/')
  })

  test('is the whole target of a request that came without a Host (Bun hands it over bare)', () => {
    expect(pathOf('/xxxxxxxxx/account')).toBe('/xxxxxxxxx/account')
    expect(pathOf('/xxxxxxxxx/account?q=//x/y')).toBe('/xxxxxxxxx/account')
  })
})
