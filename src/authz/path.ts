/**
 * The path a site's rules see (SPEC: "matched after percent-decoding and removing dot-segments; a
 * path that cannot be normalised is denied"). The app behind the proxy decodes the path its own
 * way; where two readings could differ — an encoded slash or backslash, a NUL, a double encoding,
 * a `;` path parameter (`..;`, `/admin;x/`) — there is no one path to match, so the request is refused (undefined).
 */

const MAX_URI = 8192
/**
 * After decoding, what would decode again (`%252e` → `%2e`), what servers read as a separator, or
 * a `;` (raw or `%3B`): Tomcat, Spring and Jetty strip `;params` from each segment, so
 * `/admin;a=b/x` is `/admin/x` to the app but not to a rule.
 */
const AMBIGUOUS_DECODED = /%[0-9a-fA-F]{2}|\\|;|[\u0000-\u001f\u007f]/
/** What decoding or removing dot-segments could change, or refuse: anything else is its own normal form. */
const MAY_CHANGE = /[%;]|\/\.|\/\//
/** Encoded `/`, `\` and NUL: decoded they would change the path's segments. */
const ENCODED_SEPARATOR = /%(2f|5c|00)/i

export interface RequestTarget {
  /** Decoded, dot-segments removed (RFC 3986 §5.2.4), runs of slashes as one. */
  path: string
  /** The raw query after `?` ('' when none): kept for the return URL, never matched. */
  query: string
}

/** Splits and normalises an origin-form request target (`/a/b?c`); undefined when it cannot be done unambiguously. */
export function normaliseTarget(uri: string): RequestTarget | undefined {
  if (uri.length === 0 || uri.length > MAX_URI || uri[0] !== '/' || uri.includes('#')) return undefined
  if (/[\u0000-\u0020\u007f-\uffff\\]/.test(uri)) return undefined
  const q = uri.indexOf('?')
  const rawPath = q < 0 ? uri : uri.slice(0, q)
  const query = q < 0 ? '' : uri.slice(q + 1)
  // Nothing encoded, no `;`, no dot-segment or empty segment: already normal (most checks; a forward-auth check is made for every request).
  if (!MAY_CHANGE.test(rawPath)) return { path: rawPath, query }
  if (ENCODED_SEPARATOR.test(rawPath)) return undefined
  let decoded: string
  try {
    decoded = decodeURIComponent(rawPath)
  } catch {
    return undefined
  }
  if (AMBIGUOUS_DECODED.test(decoded)) return undefined
  const path = removeDotSegments(decoded)
  return path === undefined ? undefined : { path, query }
}

/** RFC 3986 §5.2.4 on a decoded absolute path; `..` above the root stays at the root. */
function removeDotSegments(path: string): string | undefined {
  const segments = path.split('/').slice(1)
  const out: string[] = []
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    const last = i === segments.length - 1
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop()
      if (last) out.push('')
      continue
    }
    // An empty segment (`//`) is skipped but a trailing slash kept.
    if (segment === '' && !last) continue
    out.push(segment)
  }
  return '/' + out.join('/')
}
