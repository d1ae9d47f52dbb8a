import type { AuthenticationResponseJSON, RegistrationResponseJSON, WebAuthnCredential } from '@simplewebauthn/server'
import type { AppContext } from '../context'
import { UniqueViolation, type ChallengePurpose, type PasskeyRecord } from '../db/store'
import { sha256 } from '../lib/crypto'
import type { User } from './users'

/**
 * SimpleWebAuthn's server half, loaded with the first passkey ceremony (~18 MB a server may never
 * need). reflect-metadata first: SimpleWebAuthn imports it for its certificate helpers, but in a
 * lazily loaded part of the compiled binary tsyringe would initialise before it ("tsyringe
 * requires a reflect polyfill").
 */
const webauthn = () => import('reflect-metadata').then(() => import('@simplewebauthn/server'))

/** SPEC: a challenge expires after five minutes. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000
export const PASSKEY_NAME_MAX = 64

/** A passkey ceremony that cannot go on; the message is for the user. */
export class PasskeyRefused extends Error {}

const EXPIRED = 'This passkey request expired or was already used. Try again.'
const NOT_VERIFIED = 'The passkey could not be verified. Try again.'
const NOT_YOURS = 'That is not a passkey of your account. Try again with one of yours.'
export const ALREADY = 'This passkey is already registered.'

/**
 * The challenge is bound to the browser that asked: the secret its CSRF tokens are bound to
 * (the session, or the anonymous cookie), hashed. Another browser has another secret, so
 * another row, and finds no challenge.
 */
const browserKey = (secret: string) => sha256(`webauthn:${secret}`)

/** WebAuthn's user handle: the account id's bytes (random, no personal data — WebAuthn §14.6.1). */
const userHandleOf = (userId: string) => new TextEncoder().encode(userId)

function relyingParty(ctx: AppContext) {
  if (!ctx.config.passkeys) throw new PasskeyRefused('Passkeys are not available on this server.')
  return ctx.config.passkeys
}

async function newChallenge(ctx: AppContext, browserSecret: string, purpose: ChallengePurpose, challenge: string, userId: string | null) {
  await ctx.store.mfa.putChallenge(browserKey(browserSecret), purpose, { challenge, userId, expiresAt: ctx.clock.now() + CHALLENGE_TTL_MS })
}

/** A credential JSON from the page's hidden field, narrowed to what the verifier reads first. */
function parseCredential<T extends { id: string }>(raw: string | undefined): T {
  let value: unknown
  try {
    value = JSON.parse(raw ?? '')
  } catch {
    throw new PasskeyRefused('Your browser did not send a passkey. Try again, or use your password.')
  }
  const v = value as { id?: unknown; response?: unknown; type?: unknown }
  if (typeof v !== 'object' || v === null || typeof v.id !== 'string' || v.id.length > 1366 || typeof v.response !== 'object' || v.response === null)
    throw new PasskeyRefused('Your browser did not send a passkey. Try again, or use your password.')
  return value as T
}

/** "Add a passkey": options for navigator.credentials.create (a discoverable credential, user verification preferred). */
export async function registrationOptions(ctx: AppContext, user: Pick<User, 'id' | 'email' | 'fullName'>, browserSecret: string, newAccount = false) {
  const rp = relyingParty(ctx)
  const existing = await ctx.store.mfa.listPasskeys(user.id)
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: 'Latchkey',
    rpID: rp.rpId,
    userName: user.email,
    userDisplayName: user.fullName,
    userID: userHandleOf(user.id),
    attestationType: 'none',
    timeout: CHALLENGE_TTL_MS,
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  })
  // An account about to be made (/setup) has no row yet for the challenge to name.
  await newChallenge(ctx, browserSecret, 'register', options.challenge, newAccount ? null : user.id)
  return options
}

/**
 * Verifies the browser's new credential against this browser's registration challenge, made for
 * `userId` (or, `newAccount`, for an account not made yet): the passkey, not stored yet.
 */
export async function verifyNewPasskey(ctx: AppContext, userId: string, browserSecret: string, raw: string | undefined, name: string, newAccount = false): Promise<{ passkey: PasskeyRecord; userVerified: boolean }> {
  const rp = relyingParty(ctx)
  const response = parseCredential<RegistrationResponseJSON>(raw)
  const now = ctx.clock.now()
  const challenge = await ctx.store.mfa.takeChallenge(browserKey(browserSecret), 'register', now)
  if (!challenge || challenge.userId !== (newAccount ? null : userId)) throw new PasskeyRefused(EXPIRED)
  let info
  try {
    const verification = await (await webauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      requireUserVerification: false,
    })
    info = verification.verified ? verification.registrationInfo : undefined
  } catch {
    info = undefined
  }
  if (!info) throw new PasskeyRefused(NOT_VERIFIED)
  const { credential } = info
  const passkey: PasskeyRecord = {
    credentialId: credential.id,
    userId,
    name,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    signCount: credential.counter,
    transports: (credential.transports ?? []).slice(0, 8),
    createdAt: now,
    lastUsedAt: null,
  }
  return { passkey, userVerified: info.userVerified }
}

/** Verifies the browser's new credential against this browser's challenge and stores it under `name`. */
export async function registerPasskey(ctx: AppContext, user: User, browserSecret: string, raw: string | undefined, name: string): Promise<PasskeyRecord> {
  const { passkey } = await verifyNewPasskey(ctx, user.id, browserSecret, raw, name)
  try {
    await ctx.store.mfa.addPasskey(passkey)
  } catch (error) {
    if (error instanceof UniqueViolation) throw new PasskeyRefused(ALREADY)
    throw error
  }
  return passkey
}

/** "Sign in with a passkey": options for navigator.credentials.get with no allow-list (a discoverable credential names the user). */
export async function signInOptions(ctx: AppContext, browserSecret: string) {
  const rp = relyingParty(ctx)
  const options = await (await webauthn()).generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'preferred', timeout: CHALLENGE_TTL_MS })
  await newChallenge(ctx, browserSecret, 'sign-in', options.challenge, null)
  return options
}

/** The signature counter an assertion carries (authenticator data bytes 33–36, WebAuthn §6.1). */
function assertedCounter(response: AuthenticationResponseJSON): number | undefined {
  const data = Buffer.from(String(response.response.authenticatorData ?? ''), 'base64url')
  return data.length >= 37 ? data.readUInt32BE(33) : undefined
}

/**
 * Verifies an assertion against this browser's challenge and the stored credential. A counter
 * that did not move forward (a cloned authenticator, WebAuthn §6.1.1) refuses the sign-in and is
 * logged as a `warn` event — only once the signature itself is shown to be good.
 */
export async function verifyPasskeySignIn(ctx: AppContext, browserSecret: string, raw: string | undefined): Promise<{ userId: string; userVerified: boolean }> {
  return verifyAssertion(ctx, browserSecret, raw, 'sign-in', undefined)
}

/**
 * "Confirm with a passkey" (SPEC "Your account and your sessions": Change password and Delete my
 * account take the current password or a fresh passkey): options for navigator.credentials.get
 * naming only this user's passkeys, the challenge bound to this browser and this user.
 */
export async function confirmOptions(ctx: AppContext, user: User, browserSecret: string) {
  const rp = relyingParty(ctx)
  const passkeys = await ctx.store.mfa.listPasskeys(user.id)
  if (passkeys.length === 0) throw new PasskeyRefused('You have no passkey. Use your password.')
  const allowCredentials = passkeys.map((p) => ({ id: p.credentialId, transports: p.transports as WebAuthnCredential['transports'] }))
  // It stands in for the password (something known): the authenticator must verify its user
  // (PIN, fingerprint, face), not only see them present (WebAuthn §5.8.6).
  const options = await (await webauthn()).generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'required', timeout: CHALLENGE_TTL_MS, allowCredentials })
  await newChallenge(ctx, browserSecret, 'confirm', options.challenge, user.id)
  return options
}

/**
 * A fresh passkey of `user`: an assertion over this browser's `confirm` challenge (one use, five
 * minutes), by one of the user's own passkeys — another account's passkey proves nothing here.
 */
export async function verifyPasskeyConfirmation(ctx: AppContext, user: User, browserSecret: string, raw: string | undefined): Promise<void> {
  await verifyAssertion(ctx, browserSecret, raw, 'confirm', user.id)
}

async function verifyAssertion(
  ctx: AppContext,
  browserSecret: string,
  raw: string | undefined,
  purpose: 'sign-in' | 'confirm',
  userId: string | undefined,
): Promise<{ userId: string; userVerified: boolean }> {
  const rp = relyingParty(ctx)
  const response = parseCredential<AuthenticationResponseJSON>(raw)
  const now = ctx.clock.now()
  const challenge = await ctx.store.mfa.takeChallenge(browserKey(browserSecret), purpose, now)
  if (!challenge || (userId !== undefined && challenge.userId !== userId)) throw new PasskeyRefused(EXPIRED)
  const passkey = await ctx.store.mfa.findPasskey(response.id)
  if (userId !== undefined && passkey?.userId !== userId) throw new PasskeyRefused(NOT_YOURS)
  if (!passkey) throw new PasskeyRefused('This passkey is not registered here. Sign in with your password and add it on your account page.')
  const handle = response.response.userHandle
  if (handle !== undefined && handle !== Buffer.from(userHandleOf(passkey.userId)).toString('base64url')) throw new PasskeyRefused(NOT_VERIFIED)
  const credential: WebAuthnCredential = {
    id: passkey.credentialId,
    publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
    counter: passkey.signCount,
    transports: passkey.transports as WebAuthnCredential['transports'],
  }
  const { verifyAuthenticationResponse } = await webauthn()
  const verify = (counter: number) =>
    verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      credential: { ...credential, counter },
      // A sign-in without it is one factor (passkeyAmr); a confirmation without it is refused.
      requireUserVerification: purpose === 'confirm',
    }).catch(() => undefined)
  const result = await verify(passkey.signCount)
  if (!result?.verified) {
    const asserted = assertedCounter(response)
    if (asserted !== undefined && passkey.signCount > 0 && asserted <= passkey.signCount && (await verify(0))?.verified)
      ctx.log.warn('passkey counter went backwards', { user: passkey.userId, credential: sha256(passkey.credentialId).slice(0, 16), stored: passkey.signCount, asserted })
    throw new PasskeyRefused(NOT_VERIFIED)
  }
  const { newCounter, userVerified } = result.authenticationInfo
  // Two sign-ins racing with one counter value: only one moves it.
  if (!(await ctx.store.mfa.usePasskey(passkey.credentialId, newCounter, now))) throw new PasskeyRefused(NOT_VERIFIED)
  return { userId: passkey.userId, userVerified }
}

/** RFC 8176: a passkey is proof of a hardware-bound key ("hwk") and the user's presence ("user"); with user verification, two factors. */
export const passkeyAmr = (userVerified: boolean) => (userVerified ? ['hwk', 'user', 'mfa'] : ['hwk', 'user'])
