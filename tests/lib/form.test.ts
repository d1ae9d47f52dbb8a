import { describe, expect, test } from 'bun:test'
import { InvalidRequest } from '../../src/lib/errors'
import { parseFormText } from '../../src/lib/http'
import { formFields } from '../../src/web/forms'
import { paramsFromSearch } from '../../src/oauth/authorize/request'

/** What URLSearchParams makes of a body (the WHATWG parser parseFormText must agree with), or the repeated name. */
function reference(text: string, withoutEmpty: boolean): Array<[string, string]> | string {
  const out: Array<[string, string]> = []
  const seen = new Set<string>()
  for (const [name, value] of new URLSearchParams(text)) {
    if (seen.has(name)) return name
    seen.add(name)
    if (value !== '' || !withoutEmpty) out.push([name, value])
  }
  return out
}

/** The parameters as [name, value] pairs in order (own properties only: `__proto__` is one like any other), or the repeated name. */
function parsed(text: string, withoutEmpty: boolean): Array<[string, string]> | string {
  try {
    const params = parseFormText(text, withoutEmpty)
    expect(Object.getPrototypeOf(params)).toBe(Object.prototype)
    return Object.entries(params)
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
    '__proto__=x&__proto__=y',
    '__proto__=&__proto__=y',
    'constructor=1&hasOwnProperty=2&toString=3',
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

  test('linear in the body: 2 MB of names without "=", with and without empty values left out (each name once cost a search to the end: ~8 s)', () => {
    const names = Array.from({ length: 300_000 }, (_, i) => `k${i}`).join('&')
    expect(Object.keys(parseFormText(names, false)).length).toBe(300_000)
    expect(Object.keys(parseFormText(names, true)).length).toBe(0)
  })

  test('linear through URLSearchParams too: 80,000 empty parameters and a malformed escape (each empty one once cost a search of those before it: ~10 s)', () => {
    const names = Array.from({ length: 80_000 }, (_, i) => `k${i}`).join('&')
    expect(Object.keys(parseFormText(`${names}&z=%`, false)).length).toBe(80_001)
    expect(Object.entries(parseFormText(`${names}&z=%`, true))).toEqual([['z', '%']])
  })
})

describe('formFields: a page form, a repeated field as an array', () => {
  test('repeated fields become arrays in order; `__proto__` is a field, never the prototype', () => {
    const fields = formFields('a=1&b=2&a=3&a=4&__proto__=x&__proto__=y&constructor=z')
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype)
    expect(Object.entries(fields)).toEqual([['a', ['1', '3', '4']], ['b', '2'], ['__proto__', ['x', 'y']], ['constructor', 'z']])
  })

  test('linear in the repeats: 150,000 of one field (each once copied the array so far: ~50 s)', () => {
    const fields = formFields('a=&'.repeat(150_000))
    expect((fields.a as string[]).length).toBe(150_000)
  })

  test('the authorization request\'s query is read the same way: 150,000 repeats of one parameter in linear time, `__proto__` a parameter', () => {
    expect((paramsFromSearch(new URLSearchParams('a=&'.repeat(150_000))).a as string[]).length).toBe(150_000)
    const params = paramsFromSearch(new URLSearchParams('client_id=x&__proto__=y&scope=a&scope=b'))
    expect(Object.getPrototypeOf(params)).toBe(Object.prototype)
    expect(Object.entries(params)).toEqual([['client_id', 'x'], ['__proto__', 'y'], ['scope', ['a', 'b']]])
  })
})
