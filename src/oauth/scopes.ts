import type { ResourceScopes, ScopeDescription } from '../db/store'
import { currentSpeech, t } from '../i18n'

/** The scopes of the seed document and OpenID Connect's, with the words the consent page uses for each. */
export const SCOPES = {
  openid: 'Sign you in with your account',
  profile: 'See your name and profile picture',
  email: 'See your email address',
  groups: 'See the groups you belong to',
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

/** Latchkey's scopes that a token for another resource may carry beside the resource's own: sign-in and profile, never the settings API's. */
const WITH_RESOURCE: readonly Scope[] = ['openid', 'profile', 'email', 'groups', 'offline_access']

/**
 * The scope of an authorization request: Latchkey's own scopes, or — when it names a resource
 * (RFC 8707) — that resource's scopes with the sign-in ones. Undefined when it is empty or names
 * a scope the audience does not have. Latchkey's scopes come first, in canonical order, then
 * the resource's in the order it lists them.
 */
export function parseRequestScope(raw: string | null | undefined, resourceScopes: ResourceScopes | undefined): string[] | undefined {
  if (!resourceScopes) return parseScope(raw)
  if (!raw) return undefined
  const wanted = new Set(raw.split(' ').filter((s) => s !== ''))
  if (wanted.size === 0) return undefined
  for (const s of wanted) if (!(WITH_RESOURCE as readonly string[]).includes(s) && !Object.hasOwn(resourceScopes, s)) return undefined
  return scopeOrder(resourceScopes).filter((s) => wanted.has(s))
}

/** Every scope an audience has, in canonical order (a consent's scopes are kept in it). */
export function scopeOrder(resourceScopes: ResourceScopes | undefined): readonly string[] {
  return resourceScopes ? [...WITH_RESOURCE, ...Object.keys(resourceScopes)] : SUPPORTED_SCOPES
}

/**
 * The words the consent, device and account pages show for a scope, in the page's language
 * (SCOPES holds the English); a resource's scope in the operator's words for that language, else
 * its English ones.
 */
export function scopeWords(scope: string, resourceScopes?: ResourceScopes): string {
  if (resourceScopes && Object.hasOwn(resourceScopes, scope)) return describedIn(resourceScopes[scope]!, currentSpeech().locale)
  return isScope(scope) ? t(`scope.${scope}`) : scope
}

export function includesAll(granted: readonly string[], requested: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s))
}

/** A resource scope's description in `locale`: its text for that language, else the English (or its one text). */
export function describedIn(description: ScopeDescription, locale: string): string {
  if (typeof description === 'string') return description
  return description[locale] ?? description.en ?? ''
}
