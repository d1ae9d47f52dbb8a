import { describe, expect, test } from 'bun:test'
import { isPublicAddress, parseIpv6 } from '../../src/lib/public-address'

/** Every spelling a fetch to a metadata document must refuse (SPEC "Client ID Metadata Documents"). */
const REFUSED: Array<[string, string]> = [
  // IPv4: this host, private, link-local (metadata), CGNAT, reserved
  ['0.0.0.0', 'this network'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.0.5', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['100.100.100.200', 'CGNAT (Alibaba metadata)'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['198.18.0.1', 'benchmarking'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  // IPv6 loopback, unspecified, private, link-local, multicast, documentation
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
  ['0000:0000:0000:0000:0000:0000:0000:0001', 'loopback, zero-padded'],
  ['[::1]', 'loopback in brackets'],
  ['::', 'unspecified'],
  ['fd00:ec2::254', 'unique local (AWS metadata)'],
  ['FD00:EC2::254', 'unique local, uppercase'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone id'],
  ['FE80::1%25en0', 'link-local, uppercase, with a zone id'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['100::1', 'discard'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  // ::/96, IPv4-compatible
  ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
  ['::127.0.0.1', 'IPv4-compatible, dotted'],
  ['::a9fe:a9fe', 'IPv4-compatible 169.254.169.254'],
  ['::808:808', 'IPv4-compatible, even a public 8.8.8.8'],
  // ::ffff:0:0/96, mapped
  ['::ffff:127.0.0.1', 'mapped, dotted'],
  ['::FFFF:127.0.0.1', 'mapped, uppercase'],
  ['::ffff:7f00:1', 'mapped, hex'],
  ['0:0:0:0:0:ffff:7f00:1', 'mapped, uncompressed'],
  ['0::ffff:a9fe:a9fe', 'mapped, partly compressed'],
  ['::ffff:8.8.8.8', 'mapped, even a public address'],
  // ::ffff:0:0:0/96, translated (SIIT)
  ['::ffff:0:7f00:1', 'translated 127.0.0.1'],
  ['::ffff:0:127.0.0.1', 'translated, dotted'],
  // NAT64
  ['64:ff9b::7f00:1', 'NAT64 127.0.0.1'],
  ['64:ff9b::127.0.0.1', 'NAT64, dotted'],
  ['64:ff9b::808:808', 'NAT64, even a public address'],
  ['64:ff9b:1::a00:1', 'local-use NAT64 64:ff9b:1::/48'],
  ['64:ff9b:1:ffff::1', 'local-use NAT64, elsewhere in the /48'],
  // 6to4 and Teredo
  ['2002:7f00:1::', '6to4 of 127.0.0.1'],
  ['2002:808:808::1', '6to4, even of a public address'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001::1', 'Teredo, compressed'],
  // not addresses at all
  ['', 'empty'],
  ['localhost', 'a name'],
  ['1.2.3', 'three parts'],
  ['01.2.3.4', 'a leading zero'],
  ['1:2:3:4:5:6:7:8:9', 'nine groups'],
  ['1::2::3', 'two ::'],
  ['1.2.3.4::', 'a dotted quad first'],
  ['12345::1', 'a five-digit group'],
  ['fe80::1%', 'an empty zone id'],
]

const PUBLIC = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '2606:4700:4700::1111',
  '2606:4700:4700:0:0:0:0:1111',
  '2001:4860:4860::8888',
  '2A00:1450:4001:82A::200E',
  '[2a00:1450:4001:82a::200e]',
  '2a00:1450:4001:82a:0:0:0:200e',
  '2001:200::1',
]

describe('public addresses (the metadata-document fetcher reaches only these)', () => {
  test.each(REFUSED)('%s is refused (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  test.each(PUBLIC)('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })

  test('IPv6 is parsed in every spelling to the same sixteen bytes', () => {
    const loopback = [...Array(15).fill(0), 1]
    for (const spelling of ['::1', '0::1', '0:0:0:0:0:0:0:1', '0000:0000::0001', '[::1]', '::1%lo', '::0.0.0.1']) expect(parseIpv6(spelling)).toEqual(loopback)
    const mapped = [...Array(10).fill(0), 0xff, 0xff, 127, 0, 0, 1]
    for (const spelling of ['::ffff:127.0.0.1', '::FFFF:7F00:1', '0:0:0:0:0:ffff:127.0.0.1', '::ffff:7f00:0001']) expect(parseIpv6(spelling)).toEqual(mapped)
    expect(parseIpv6('1:2:3:4:5:6:7::')).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 0])
    expect(parseIpv6('::2:3:4:5:6:7:8')).toEqual([0, 0, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8])
    expect(parseIpv6('1:2:3:4:5:6:7')).toBeUndefined()
    expect(parseIpv6('1:2:3:4:5:6:7:8::')).toBeUndefined()
  })
})
