/** Upstream providers (SPEC "Sign in with another account"), the identities linked to them, and sign-ins in flight. */
import type { NewMail } from './mail'
import type { NewUser } from './users'
import { countWaysIn, type WaysIn } from './mfa'

export type ProviderKind = 'oidc' | 'google' | 'github'

export interface ProviderRecord {
  id: string
  name: string
  kind: ProviderKind
  issuer: string
  /** GitHub's API base; null for OpenID Connect providers. */
  apiUrl: string | null
  clientId: string
  /** The client secret, sealed (src/lib/seal.ts) and bound to the provider's id: never a plaintext column. */
  clientSecretSealed: string
  scope: string
  allowCreate: boolean
  allowedDomains: string[]
  linkVerifiedEmail: boolean
  trustMfa: boolean
  /** When the row last changed: a cached discovery document of an older version is not used. */
  updatedAt: number
}

/**
 * Where a provider's subjects come from: its kind, issuer and GitHub API. A subject is unique only
 * at its issuer (OpenID Connect Core §2), so an identity is only ever written for the origin its
 * sign-in was checked against, and a provider with identities never moves to another origin.
 */
export type ProviderOrigin = Pick<ProviderRecord, 'kind' | 'issuer' | 'apiUrl'>

export const originOf = (p: ProviderOrigin): ProviderOrigin => ({ kind: p.kind, issuer: p.issuer, apiUrl: p.apiUrl })
export const sameOrigin = (a: ProviderOrigin, b: ProviderOrigin) => a.kind === b.kind && a.issuer === b.issuer && a.apiUrl === b.apiUrl

/**
 * What deleting a provider does to people (SPEC "Operators": a deletion names what will happen):
 * the accounts connected through it, and those of them it is the only way in for (WaysIn: no
 * password, no passkey, no other connected account) — a password reset by email is their way back.
 */
export interface ProviderReach {
  connected: number
  stranded: number
}

/** The reach from the WaysIn of the connected people, grouped (`people` with the same ways): one row per kind of person, not per person. */
export function reachOf(groups: Iterable<WaysIn & { people: number }>): ProviderReach {
  const reach = { connected: 0, stranded: 0 }
  for (const g of groups) {
    reach.connected += g.people
    if (countWaysIn(g) <= 1) reach.stranded += g.people
  }
  return reach
}

/** An identity: the provider and its subject — never an email alone. */
export interface IdentityRecord {
  providerId: string
  subject: string
  userId: string
  /** The address the provider last named: shown on /account, never used to decide a link. */
  email: string | null
  createdAt: number
  lastUsedAt: number | null
}

export interface ProviderState {
  /** SHA-256 of the `state` sent to the provider. */
  stateHash: string
  providerId: string
  /** SHA-256 of the browser's cookie for this sign-in. */
  browserHash: string
  nonce: string
  returnTo: string | null
  /** Set when a signed-in user connects the provider from /account. */
  userId: string | null
  expiresAt: number
}

export interface ProviderStore {
  /** UniqueViolation when the id is taken. */
  insertProvider(provider: ProviderRecord, now: number): Promise<void>
  /**
   * Replaces everything but the id; 'unknown' for an unknown id. When it moves the provider to
   * another origin while accounts are connected through it, nothing changes and their number is
   * returned — decided with the provider's row locked, in the transaction that writes: an identity
   * written at once (which holds the row too, and checks its origin) is counted, or finds the
   * provider moved and is not written.
   */
  updateProvider(provider: ProviderRecord): Promise<'updated' | 'unknown' | { connected: number }>
  /** What deleting the provider would do to people now (the confirmation's numbers); undefined for an unknown id. */
  providerReach(id: string): Promise<ProviderReach | undefined>
  /**
   * Deletes it with its identities and sign-ins in flight; undefined for an unknown id. The reach
   * is counted in the deleting transaction, with the provider's row and its people's rows locked:
   * a password or passkey removed at once (which holds the user's row, WaysIn) is counted or waits.
   * `refuseStranding`: when anyone would be stranded, nothing changes (`deleted: false`).
   */
  deleteProvider(id: string, opts?: { refuseStranding?: boolean }): Promise<(ProviderReach & { deleted: boolean }) | undefined>
  findProvider(id: string): Promise<ProviderRecord | undefined>
  listProviders(): Promise<ProviderRecord[]>

  insertState(state: ProviderState): Promise<void>
  /** Deletes the state whatever it holds (good once); returns it only when unexpired. */
  takeState(stateHash: string, now: number): Promise<ProviderState | undefined>

  /**
   * Every write below takes `origin`, the provider's origin as the sign-in was checked against, and
   * throws ProviderMoved (nothing written) when the provider is no longer there — moved by an
   * operator in between (ProviderStore.updateProvider), or deleted.
   */
  /** The user an identity signs in, its last use and shown address recorded; undefined when none is linked. */
  useIdentity(identity: { providerId: string; subject: string; email: string | null; origin: ProviderOrigin }, now: number): Promise<string | undefined>
  /**
   * Links an identity to a user (and queues `mail` in the same commit). 'taken': the subject is
   * linked already (to anyone), or the user already has an identity at this provider.
   * 'signed-out': `session` (the connecting browser's session, by its id hash) is no longer the
   * user's — it is held while the link is made, so a recovery or sign-out that ends it either
   * waits for the link and removes it too, or comes first and no link is made.
   */
  linkIdentity(identity: { providerId: string; subject: string; userId: string; email: string | null; origin: ProviderOrigin; session?: string }, now: number, mail?: NewMail): Promise<'linked' | 'taken' | 'signed-out'>
  /**
   * Links to the enabled account whose address is `email` and verified, in one statement (an
   * address that changes or is unverified at that moment links nothing). The user's id, or
   * undefined when no such account exists (or the link is 'taken' as above).
   */
  linkByVerifiedEmail(identity: { providerId: string; subject: string; email: string; origin: ProviderOrigin }, now: number, mail: (to: string) => NewMail | null): Promise<string | undefined>
  /** A new account and its identity, in one commit; UniqueViolation when the email or the identity exists. */
  createWithIdentity(user: NewUser, identity: { providerId: string; subject: string; email: string | null; origin: ProviderOrigin }, now: number): Promise<void>
  listIdentities(userId: string): Promise<IdentityRecord[]>
  /** How many accounts a provider's identities sign in to (a provider with any keeps its issuer). */
  countIdentities(providerId: string): Promise<number>
  /**
   * 'last' (nothing changed): the user would have no way left to sign in — no password, no
   * passkey, no other identity (WaysIn) — decided under a lock on the user's row.
   */
  unlinkIdentity(userId: string, providerId: string): Promise<'done' | 'unknown' | 'last'>
}
