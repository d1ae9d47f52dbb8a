import { describe, expect, test } from 'bun:test'
import { cookieNamed, parseCookies } from '../../src/lib/cookies'

describe('cookies', () => {
  test('one cookie by name reads exactly what the whole record reads', () => {
    const headers = [null, '', 'a=1', 'a=1; b=2', ' a = 1 ;b=2', 'b=2; a=1; a=3', 'a', 'a;a=2', 'x=1;', ';a=4', 'aa=1; a=5', 'a=1=2; b', 'b=; a=', '=x; a=6', 'lk_site=abc; __Host-lk_site=def', 'a=\u00e9;b=2']
    for (const header of headers)
      for (const name of ['a', 'b', 'aa', 'x', 'lk_site', '__Host-lk_site', 'missing']) expect([header, name, cookieNamed(header, name)]).toEqual([header, name, parseCookies(header)[name]])
  })
})
