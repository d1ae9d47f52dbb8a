import { RE2JS } from 're2js'

/**
 * A site rule's `--path`, matched in time linear in the path: RE2's syntax and engine (re2js, its
 * JavaScript port), as Authelia's rules run on Go's RE2. JavaScript's own RegExp backtracks, and a
 * path an unauthenticated client sends through forward-auth could hold it for minutes: measured in
 * Bun, three `.*` between slashes before `\.php$` took 463 ms on a 2,002-character path (cubic in
 * its length), and `^/(a+)+$` 498 ms on 30 characters (doubling with each more); with RE2 either
 * takes microseconds to a millisecond on 8,000.
 * RE2 has no look-arounds or back-references (what makes linear time possible).
 */
export type PathPattern = { test(path: string): boolean }

/** The pattern compiled, or why not: `syntax` when no engine reads it, `unsupported` when JavaScript's would but RE2's does not (a look-around, a back-reference, a `\u` escape, a count over 1000). */
export function compilePathPattern(source: string): PathPattern | 'syntax' | 'unsupported' {
  try {
    return RE2JS.compile(source)
  } catch {
    try {
      new RegExp(source)
      return 'unsupported'
    } catch {
      return 'syntax'
    }
  }
}

// Compiled once per pattern (bounded: they come from the operator's rules).
const compiled = new Map<string, PathPattern>()

/**
 * The matcher for a stored pattern. One stored before RE2 was used and that RE2 cannot read (a
 * look-around, checked with JavaScript's RegExp then) keeps JavaScript's engine, so a rule that
 * worked goes on working until it is added again, when it is refused with the reason.
 */
export function pathPatternOf(source: string): PathPattern {
  let pattern = compiled.get(source)
  if (!pattern) {
    if (compiled.size >= 4096) compiled.clear()
    const made = compilePathPattern(source)
    pattern = typeof made === 'string' ? new RegExp(source) : made
    compiled.set(source, pattern)
  }
  return pattern
}
