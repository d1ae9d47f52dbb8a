import { Secret, TOTP } from 'otpauth'
import { renderSVG } from 'uqr'
import type { AppContext } from '../context'
import { sha256 } from '../lib/crypto'
import { seal, unseal } from '../lib/seal'

// RFC 6238 as every authenticator app implements it: SHA-1, 6 digits, 30-second steps.
const PERIOD_S = 30
const DRIFT_STEPS = 1
const RECOVERY_CODES = 10
// Recovery codes: 16 characters of RFC 4648's base32 alphabet (80 bits), so SHA-256 at rest is enough.
const RECOVERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'

function totpOf(ctx: AppContext, secret: Secret, email: string): TOTP {
  return new TOTP({ issuer: ctx.config.brand.name, label: email, secret, algorithm: 'SHA1', digits: 6, period: PERIOD_S })
}

/** The otpauth:// URI an authenticator app reads: its issuer is the operator's BRAND_NAME. */
export const totpUri = (ctx: AppContext, base32: string, email: string) => totpOf(ctx, Secret.fromBase32(base32), email).toString()

/** A new secret for the set-up page (160 bits, RFC 4226 §4), sealed for storage. */
export async function newTotpSecret(ctx: AppContext, userId: string): Promise<{ base32: string; sealed: string }> {
  const secret = new Secret({ size: 20 })
  return { base32: secret.base32, sealed: await seal(ctx.sealKey, secret.base32, `totp:${userId}`) }
}

export async function openTotpSecret(ctx: AppContext, userId: string, sealed: string): Promise<string | undefined> {
  return unseal(ctx.sealKey, sealed, `totp:${userId}`)
}

/** What the set-up page shows: the otpauth:// URI as a QR code (SVG) and the secret in groups of four. */
export function totpSetup(ctx: AppContext, base32: string, email: string): { qrSvg: string; secretText: string } {
  const uri = totpUri(ctx, base32, email)
  return { qrSvg: renderSVG(uri, { border: 2 }), secretText: base32.replace(/(.{4})(?=.)/g, '$1 ') }
}

/**
 * The time step a code belongs to, when it is right for `now` give or take one step of clock
 * drift (RFC 6238 §5.2); undefined otherwise. Whether the step was used already is the store's
 * to decide (atomically), so each code is accepted once.
 */
export function totpStep(ctx: AppContext, base32: string, code: string, now: number): number | undefined {
  const token = code.replace(/\s/g, '')
  if (!/^\d{6}$/.test(token)) return undefined
  const delta = totpOf(ctx, Secret.fromBase32(base32), '').validate({ token, timestamp: now, window: DRIFT_STEPS })
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD_S) + delta
}

/** Ten new recovery codes, as shown to the user once, and the hashes that are stored. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = crypto.getRandomValues(new Uint8Array(16))
    const chars = Array.from(bytes, (b) => RECOVERY_ALPHABET[b & 31]).join('')
    return chars.match(/.{4}/g)!.join('-')
  })
  return { codes, hashes: codes.map(recoveryHash) }
}

/** The stored form of a code as typed: case, spaces and dashes do not matter; undefined when it cannot be one. */
export function recoveryCodeHash(typed: string): string | undefined {
  const plain = typed.toLowerCase().replace(/[\s-]/g, '')
  return new RegExp(`^[${RECOVERY_ALPHABET}]{16}$`).test(plain) ? sha256(`recovery:${plain}`) : undefined
}

const recoveryHash = (code: string) => recoveryCodeHash(code)!

/** A right code for now (±1 step) whose step was not used before: each code works once (SPEC). */
export async function acceptTotpCode(ctx: AppContext, userId: string, code: string): Promise<boolean> {
  const totp = await ctx.store.mfa.findTotp(userId)
  if (!totp || totp.confirmedAt === null) return false
  const secret = await openTotpSecret(ctx, userId, totp.sealedSecret)
  if (!secret) return false
  const step = totpStep(ctx, secret, code, ctx.clock.now())
  return step !== undefined && (await ctx.store.mfa.useTotpStep(userId, step))
}

/** One of the user's recovery codes, used up. */
export async function acceptRecoveryCode(ctx: AppContext, userId: string, typed: string): Promise<boolean> {
  const hash = recoveryCodeHash(typed)
  return hash !== undefined && (await ctx.store.mfa.useRecoveryCode(userId, hash))
}
