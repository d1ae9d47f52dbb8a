import { describe, expect, test } from 'bun:test'
import { imageTypeOf, type ImageType } from '../../src/brand/image'
import { GIF, ICO, PNG, WEBP } from './fixtures'

const ALL: ImageType[] = ['image/png', 'image/webp', 'image/svg+xml', 'image/x-icon']
const text = (s: string) => new TextEncoder().encode(s)

describe('an image type from its bytes (SPEC "Brand and language")', () => {
  test('PNG, WebP and ICO by their magic numbers; GIF and JPEG are none of them', () => {
    expect([PNG, WEBP, ICO].map((b) => imageTypeOf(b, ALL))).toEqual(['image/png', 'image/webp', 'image/x-icon'])
    expect(imageTypeOf(GIF, ALL)).toBeNull()
    expect(imageTypeOf(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]), ALL)).toBeNull()
    expect(imageTypeOf(new Uint8Array(), ALL)).toBeNull()
  })

  test('SVG: its first element is <svg>, after a BOM, an XML declaration, comments or a plain DOCTYPE', () => {
    for (const svg of [
      '<svg xmlns="http://www.w3.org/2000/svg"/>',
      '\uFEFF<?xml version="1.0"?>\n<!-- made by hand -->\n<svg viewBox="0 0 1 1"></svg>',
      '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg>',
      '  \n<svg\n  width="1">',
    ])
      expect([svg, imageTypeOf(text(svg), ALL)]).toEqual([svg, 'image/svg+xml'])
  })

  test('not SVG: HTML, text mentioning <svg> later, <svgx>, a DOCTYPE with entities (an XML bomb), bytes that are not UTF-8', () => {
    for (const other of [
      '<html><body><svg></svg></body></html>',
      'hello <svg></svg>',
      '<svgx>',
      '<!DOCTYPE svg [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><svg>&b;</svg>',
      '<?xml version="1.0"?><script>alert(1)</script><svg/>',
    ])
      expect([other, imageTypeOf(text(other), ALL)]).toEqual([other, null])
    expect(imageTypeOf(new Uint8Array([0x3c, 0x73, 0x76, 0x67, 0x20, 0xff, 0xfe]), ALL)).toBeNull()
  })

  test('a type outside the allowed list is refused even when recognised', () => {
    expect(imageTypeOf(ICO, ['image/png', 'image/webp', 'image/svg+xml'])).toBeNull()
    expect(imageTypeOf(WEBP, ['image/png', 'image/x-icon', 'image/svg+xml'])).toBeNull()
  })
})
