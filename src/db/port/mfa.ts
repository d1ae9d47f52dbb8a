/**
 * The ways a user signs in besides the password: passkeys (WebAuthn credentials and the
 * challenges of their ceremonies), TOTP and recovery codes.
 */

export interface PasskeyRecord {
  /** base64url; unique across all users (one credential belongs to one account). */
  credentialId: string
  userId: string
  name: string
  /** The COSE public key, base64url. */
  publicKey: string
  signCount: number
  transports: string[]
  createdAt: number
  lastUsedAt: number | null
}

/** `confirm`: a fresh passkey in place of the password (Change password, Delete my account), for the challenge's user only. */
export type ChallengePurpose = 'register' | 'sign-in' | 'confirm'

export interface ChallengeRecord {
  /** base64url, as the browser echoes it in clientDataJSON. */
  challenge: string
  /** Registration: the user the passkey is being added for. */
  userId: string | null
  expiresAt: number
}

export interface TotpRecord {
  sealedSecret: string
  /** null until a correct code confirmed the set-up: TOTP is on only once confirmed. */
  confirmedAt: number | null
  /** The newest 30-second step whose code was accepted. */
  lastStep: number
}

/** What `user list --json` shows of a user's second factors. */
export interface MfaSummary {
  totp: boolean
  passkeys: number
}

/** Removing a way to sign in: done, refused because it is the last one, or nothing there to remove. */
export type RemoveOutcome = 'removed' | 'last' | 'unknown'

/**
 * Every way a user can sign in: the password, each passkey, each connected account (an identity
 * goes with its provider, so each one counted is at a provider still configured). Removing a
 * passkey, the password or a connected account asks the same question — is it the last one? —
 * counted with the user's row locked, so two removals at once see each other (SPEC: "not the last
 * way to sign in").
 */
export interface WaysIn {
  password: boolean
  passkeys: number
  identities: number
}

export const countWaysIn = (ways: WaysIn) => Number(ways.password) + ways.passkeys + ways.identities

/**
 * The ways that can confirm the account's own changes — "Delete my account" and setting a
 * password take the password or a fresh passkey (SPEC "Your account and your sessions"): the
 * password and passkeys. Removing one of them must leave one, whatever else is connected,
 * or the account could no longer be deleted or given a password by its owner.
 */
export const countConfirmingWays = (ways: WaysIn) => Number(ways.password) + ways.passkeys

export interface MfaStore {
  /** A new passkey; UniqueViolation when its credential id is registered already (to anyone). */
  addPasskey(passkey: PasskeyRecord): Promise<void>
  listPasskeys(userId: string): Promise<PasskeyRecord[]>
  findPasskey(credentialId: string): Promise<PasskeyRecord | undefined>
  renamePasskey(userId: string, credentialId: string, name: string): Promise<boolean>
  /** Refused ('last') when it is the user's last way to sign in (WaysIn). */
  removePasskey(userId: string, credentialId: string): Promise<RemoveOutcome>
  /**
   * Records a sign-in with the passkey: the counter only moves forward (false when it would not,
   * e.g. another sign-in with the same counter got there first).
   */
  usePasskey(credentialId: string, signCount: number, now: number): Promise<boolean>

  /** A new challenge for this browser and purpose, replacing the one it had. */
  putChallenge(browserHash: string, purpose: ChallengePurpose, challenge: ChallengeRecord): Promise<void>
  /** Takes (deletes) this browser's challenge for the purpose: single use, whatever the answer. Undefined when none or expired. */
  takeChallenge(browserHash: string, purpose: ChallengePurpose, now: number): Promise<ChallengeRecord | undefined>

  findTotp(userId: string): Promise<TotpRecord | undefined>
  /** A new, unconfirmed secret; false (nothing changed) when TOTP is already on. */
  startTotp(userId: string, sealedSecret: string, now: number): Promise<boolean>
  /** Turns the unconfirmed secret on, accepting `step`, with these recovery codes; false when there was none to confirm. */
  confirmTotp(userId: string, step: number, recoveryHashes: readonly string[], now: number): Promise<boolean>
  /** Accepts a code of `step` once: false when that step (or a later one) was used already. */
  useTotpStep(userId: string, step: number): Promise<boolean>
  /** TOTP and the recovery codes go (`user reset-mfa`, "Turn off"); false when there was nothing. */
  removeTotp(userId: string): Promise<boolean>

  /** "New recovery codes": these replace all the old ones (only while TOTP is on; false otherwise). */
  replaceRecoveryCodes(userId: string, hashes: readonly string[], now: number): Promise<boolean>
  /** Uses (deletes) one code; false when it is not one of the user's. */
  useRecoveryCode(userId: string, hash: string): Promise<boolean>
  countRecoveryCodes(userId: string): Promise<number>

  /** Sets (or replaces) the password. */
  setPassword(userId: string, passwordHash: string): Promise<boolean>
  /** Refused ('last') when it is the user's last way to sign in (WaysIn): no passkey or connected account instead. */
  removePassword(userId: string): Promise<RemoveOutcome>

  /** Every user's second factors, by user id (users with none are absent). */
  summaries(): Promise<Map<string, MfaSummary>>
}
