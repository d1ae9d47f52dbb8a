import { describe, expect, test } from 'bun:test'
import { repeatsRepetition } from '../../src/authz/regex-risk'

describe('repeatsRepetition: the path patterns a crafted path can make take exponential time', () => {
  test('a repetition inside a repeated group is found, however it is written', () => {
    const risky = ['(a+)+', '^/(a+)+$', '^/files(/[^/]*)*$', '(x+){2,}', '((ab)*c)+', '(?:a*)*', '(?<n>a+)+', '(a{1,5})*', '(\\d+)+', '((a)+)+', '(a+b)*', '(a*?)+?', '((a+)?)*', '(a|b+)*', '^/(x|y+){2,}']
    expect(risky.filter((source) => !repeatsRepetition(source))).toEqual([])
  })

  test('one level of repetition, or brackets, escapes and a {…} that is no quantifier, is not taken for it', () => {
    const plain = ['^/public/', '^/api/v[0-9]+/users$', '(ab)+', '[(a+)+]', '\\(a+\\)+', '(a+)?', '(a+){1}', '(a{0,1})+', '^/(foo|bar)/.*$', '(?=a+)b', 'a{2,}b+', '\\.(jpg|png)$', '(a+)', '[\\]+]+', '(?<=x+)y', 'x{,5}+', '(a+)(b+)', '(a)+(b)*']
    expect(plain.filter((source) => repeatsRepetition(source))).toEqual([])
  })

  test('what it refuses is what backtracks: (a+)+ on a path of 24 letters and a miss takes longer than (ab)+ on 24,000', () => {
    const miss = (re: RegExp, text: string) => {
      const started = performance.now()
      re.test(text)
      return performance.now() - started
    }
    const nested = miss(/^\/(a+)+$/, '/' + 'a'.repeat(24) + '!')
    const flat = miss(/^\/(ab)+$/, '/' + 'ab'.repeat(12_000) + '!')
    expect(repeatsRepetition('^/(a+)+$')).toBe(true)
    expect(repeatsRepetition('^/(ab)+$')).toBe(false)
    expect(nested).toBeGreaterThan(flat)
  })
})
