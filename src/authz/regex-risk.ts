/**
 * Whether a regular expression repeats a group that itself holds a repetition (`(a+)+`,
 * `(/[a-z]*)*`, `(x+){2,}`): its star height is over one, the shape that lets a backtracking
 * engine (JavaScriptCore's, like every JavaScript one) take exponential time on a path made to
 * miss it. Authelia's rules run on Go's linear-time engine; ours cannot, so an operator's `--path`
 * of that shape is refused when it is written (Fastify refuses such route patterns, by the same
 * measure). What it does not catch (`(a|a)*`, overlapping alternatives) stays bounded by the
 * path's length (MAX_URI).
 *
 * `source` is a valid pattern (new RegExp accepted it, no flags): this reads its structure only.
 */
export function repeatsRepetition(source: string): boolean {
  // One frame per open group: whether something in it repeats.
  const frames: boolean[] = [false]
  // What the next quantifier would apply to: a group (and whether it holds a repetition), or an atom.
  let last: 'none' | 'atom' | 'group' = 'none'
  let lastHolds = false
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (c === '\\') {
      i += 2
      last = 'atom'
      continue
    }
    if (c === '[') {
      i++
      if (source[i] === '^') i++
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1
      i++
      last = 'atom'
      continue
    }
    if (c === '(') {
      frames.push(false)
      i++
      if (source[i] === '?') i += source[i + 1] === '<' && source[i + 2] !== '=' && source[i + 2] !== '!' ? source.indexOf('>', i) + 1 - i : source[i + 1] === '<' ? 3 : 2
      last = 'none'
      continue
    }
    if (c === ')') {
      const holds = frames.pop()!
      frames[frames.length - 1] ||= holds
      last = 'group'
      lastHolds = holds
      i++
      continue
    }
    const q = quantifierAt(source, i)
    if (q && last !== 'none') {
      if (q.repeats) {
        if (last === 'group' && lastHolds) return true
        frames[frames.length - 1] = true
      }
      i = q.end
      if (source[i] === '?') i++ // lazy
      last = 'none'
      continue
    }
    last = c === '|' || c === '^' || c === '$' ? 'none' : 'atom'
    i++
  }
  return false
}

/** A quantifier at `i`, and whether it may repeat (its most is over one); a `{` that is no quantifier is a literal, as without the `u` flag. */
function quantifierAt(source: string, i: number): { end: number; repeats: boolean } | undefined {
  const c = source[i]
  if (c === '*' || c === '+') return { end: i + 1, repeats: true }
  if (c === '?') return { end: i + 1, repeats: false }
  if (c !== '{') return undefined
  const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 40))
  if (!m) return undefined
  const most = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3])
  return { end: i + m[0].length, repeats: most > 1 }
}
