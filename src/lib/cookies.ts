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
