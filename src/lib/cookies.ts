export function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {}
  if (!header) return out
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    if (name && !Object.hasOwn(out, name)) out[name] = part.slice(eq + 1).trim()
  }
  return out
}

/**
 * One cookie's value exactly as `parseCookies(header)[name]` reads it (the first of that name,
 * name and value trimmed), without building the record of all of them: a forward-auth check reads
 * the site cookie on every request to every protected app.
 */
export function cookieNamed(header: string | null, name: string): string | undefined {
  if (!header) return undefined
  for (let start = 0; start <= header.length; ) {
    let end = header.indexOf(';', start)
    if (end < 0) end = header.length
    const eq = header.indexOf('=', start)
    if (eq >= 0 && eq < end && header.slice(start, eq).trim() === name) return header.slice(eq + 1, end).trim()
    start = end + 1
  }
  return undefined
}

/** HttpOnly; SameSite=Lax; Path=/; Secure when served over https (SPEC "Pages"). */
export function cookie(name: string, value: string, opts: { maxAgeSeconds?: number; secure: boolean }): string {
  let s = `${name}=${value}; Path=/; HttpOnly; SameSite=Lax`
  if (opts.maxAgeSeconds !== undefined) s += `; Max-Age=${opts.maxAgeSeconds}`
  if (opts.secure) s += '; Secure'
  return s
}

export function clearCookie(name: string, secure: boolean): string {
  return cookie(name, '', { maxAgeSeconds: 0, secure })
}
