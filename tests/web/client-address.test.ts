import { describe, expect, test } from 'bun:test'
import { formatIp, parseIp, parseTrustedProxies, peerAddressOf, rateLimitKey, resolveClientAddress, setPeerResolver } from '../../src/web/client-address'

describe('client addresses (TRUSTED_PROXIES)', () => {
  test('addresses parse in the forms proxies write them and print canonically', () => {
    const cases: Array<[string, string]> = [
      ['192.0.2.1', '192.0.2.1'],
      ['::ffff:192.0.2.1', '192.0.2.1'],
      ['192.0.2.1:8080', '192.0.2.1'],
      ['[2001:db8::1]:443', '2001:db8::1'],
      ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
      ['fe80::1%eth0', 'fe80::1'],
      ['::1', '::1'],
      ['::', '::'],
    ]
    for (const [raw, shown] of cases) expect(formatIp(parseIp(raw)!)).toBe(shown)
    for (const bad of ['', 'x', '256.1.1.1', '01.2.3.4', '1.2.3', '1::2::3', '1:2:3:4:5:6:7:8:9', 'proxy.example']) expect(parseIp(bad)).toBeUndefined()
  })

  test('the peer, unless it is a trusted proxy; then the right-most untrusted forwarded hop', () => {
    const proxies = parseTrustedProxies('10.0.0.0/8, 2001:db8::/32, 192.0.2.7')
    expect(resolveClientAddress('203.0.113.5', '198.51.100.1', proxies)).toBe('203.0.113.5')
    expect(resolveClientAddress('10.1.1.1', '198.51.100.1', proxies)).toBe('198.51.100.1')
    expect(resolveClientAddress('10.1.1.1', '6.6.6.6, 198.51.100.1, 10.2.2.2', proxies)).toBe('198.51.100.1')
    expect(resolveClientAddress('192.0.2.7', '10.0.0.3, 10.0.0.4', proxies)).toBe('10.0.0.3')
    expect(resolveClientAddress('::ffff:10.1.1.1', '2001:db8::9, 2a00::1', proxies)).toBe('2a00::1')
    expect(resolveClientAddress('10.1.1.1', 'garbage, 10.0.0.9', proxies)).toBe('10.0.0.9')
    expect(resolveClientAddress('10.1.1.1', null, proxies)).toBe('10.1.1.1')
    expect(resolveClientAddress('10.1.1.1', '198.51.100.1', [])).toBe('10.1.1.1')
  })

  test('the last answer is kept for the same peer, X-Forwarded-For and TRUSTED_PROXIES only', () => {
    const both = parseTrustedProxies('127.0.0.1,10.0.0.0/8')
    const loopback = parseTrustedProxies('127.0.0.1')
    expect(resolveClientAddress('127.0.0.1', '203.0.113.7, 10.0.0.1', both)).toBe('203.0.113.7')
    expect(resolveClientAddress('127.0.0.1', '203.0.113.7, 10.0.0.1', both)).toBe('203.0.113.7')
    expect(resolveClientAddress('127.0.0.1', '203.0.113.7, 10.0.0.1', loopback)).toBe('10.0.0.1')
    expect(resolveClientAddress('127.0.0.1', '203.0.113.8, 10.0.0.1', both)).toBe('203.0.113.8')
    expect(resolveClientAddress('192.0.2.9', '203.0.113.8, 10.0.0.1', both)).toBe('192.0.2.9')
    expect(resolveClientAddress('127.0.0.1', '203.0.113.8, 10.0.0.1', both)).toBe('203.0.113.8')
  })

  test("a request's peer is asked of the server once, and asked again for the next request", () => {
    const asked: Request[] = []
    setPeerResolver((request) => (asked.push(request), `192.0.2.${asked.length}`))
    try {
      const first = new Request('http://latchkey.test/a')
      const second = new Request('http://latchkey.test/a')
      expect([peerAddressOf(first), peerAddressOf(first), peerAddressOf(second), peerAddressOf(second)]).toEqual(['192.0.2.1', '192.0.2.1', '192.0.2.2', '192.0.2.2'])
      expect(asked).toEqual([first, second])
    } finally {
      setPeerResolver(() => undefined)
    }
  })

  test('rate limits count IPv4 addresses and IPv6 /64 networks', () => {
    expect(rateLimitKey('192.0.2.1')).toBe('192.0.2.1')
    expect(rateLimitKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64')
    expect(rateLimitKey('2001:db8:1:2:bbbb::2')).toBe('2001:db8:1:2::/64')
  })

  test('bad TRUSTED_PROXIES entries are named', () => {
    expect(() => parseTrustedProxies('10.0.0.0/8, nope')).toThrow('"nope" is not an IP address or CIDR block')
    expect(() => parseTrustedProxies('10.0.0.0/33')).toThrow('"10.0.0.0/33"')
    expect(parseTrustedProxies(' ')).toEqual([])
  })
})
