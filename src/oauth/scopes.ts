/** The scopes of the seed document and OpenID Connect's, with the words the consent page uses for each. */
export const SCOPES = {
  openid: 'Sign you in with your account',
  profile: 'See your name and profile picture',
  email: 'See your email address',
  'settings:read': 'Read the settings this app saved for you',
  'settings:write': 'Save and delete settings for you in this app',
  // Accepted, and grants nothing more: every code exchange already returns a refresh token.
  offline_access: 'Keep access while you are not using it',
} as const

export type Scope = keyof typeof SCOPES

export const SUPPORTED_SCOPES = Object.keys(SCOPES) as Scope[]

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value)
}

/**
 * Parses a space-separated scope string (RFC 6749 §3.3). Returns undefined when it is empty
 * or names an unknown scope. Duplicates collapse; the order is the canonical order above.
 */
export function parseScope(raw: string | null | undefined): Scope[] | undefined {
  if (!raw) return undefined
  const names = raw.split(' ').filter((s) => s !== '')
  if (names.length === 0 || !names.every(isScope)) return undefined
  const wanted = new Set(names)
  return SUPPORTED_SCOPES.filter((s) => wanted.has(s))
}

export function includesAll(granted: readonly string[], requested: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s))
}
