import { describe, expect, test } from 'bun:test'
import { InvalidRequest } from '../../src/lib/errors'
import { parseFormText } from '../../src/lib/http'

/** What URLSearchParams makes of a body (the WHATWG parser parseFormText must agree with), or the repeated name. */
function reference(text: string, withoutEmpty: boolean): Record<string, string> | string {
  const out: Record<string, string> = {}
  const seen = new Set<string>()
  for (const [name, value] of new URLSearchParams(text)) {
    if (seen.has(name)) return name
    seen.add(name)
    if (value !== '' || !withoutEmpty) out[name] = value
  }
  return out
}

function parsed(text: string, withoutEmpty: boolean): Record<string, string> | string {
  try {
    return parseFormText(text, withoutEmpty)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequest)
    return /parameter "(.*)" is repeated/s.exec((error as { description: string }).description)![1]!
  }
}

describe('parseFormText: the WHATWG form parser, by hand', () => {
  const cases = [
    '',
    '?',
    '?a=1',
    '??a=1',
    '&&a=1&&b=2&',
    'a',
    'a=',
    '=',
    '=x',
    'a==b',
    'a=1=2',
    'a+b=c+d',
    'a%2Bb=%2B',
    'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=lk_dc_x&client_id=c',
    'a=%',
    'a=%z1',
    'a=%4',
    'a=100%&b=2',
    'a=%FF',
    'a=%C3%A9',
    'a=%C3',
    'a=%ED%A0%80',
    'a=%EF%BB%BFb',
    'a=%00',
    'é=ü',
    'a=1&a=2',
    'a=&a=2',
    'a=1&b=&b=',
    'a%=1&a%=2',
    'a=%FF&a=%FE',
    'a=1&b=%zz&a=2',
    'a=😀%F0%9F%98%80',
    '__proto__=x&constructor=y',
  ]
  for (const text of cases)
    for (const withoutEmpty of [false, true])
      test(`${JSON.stringify(text)}${withoutEmpty ? ', empty values left out' : ''}`, () => {
        expect(parsed(text, withoutEmpty)).toEqual(reference(text, withoutEmpty))
      })

  test('agrees with URLSearchParams on 20,000 random bodies of form characters and escapes', () => {
    const pieces = ['a', 'b', 'é', '=', '&', '+', '%', '%2', '%41', '%2B', '%26', '%3D', '%C3%A9', '%C3', '%FF', '%zz', '?', ' ', '😀']
    let seed = 38
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    for (let i = 0; i < 20_000; i++) {
      let text = ''
      const length = next() % 12
      for (let j = 0; j < length; j++) text += pieces[next() % pieces.length]
      const withoutEmpty = next() % 2 === 0
      const got = parsed(text, withoutEmpty)
      const want = reference(text, withoutEmpty)
      if (!Bun.deepEquals(got, want)) expect({ text, withoutEmpty, got }).toEqual({ text, withoutEmpty, got: want })
    }
  })
})
