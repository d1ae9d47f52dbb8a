/** Compact JWS (RFC 7515) with RS256, ES256 (RFC 7518 §3.3, §3.4) or EdDSA (RFC 8037), on the platform's WebCrypto. */
import type { IdTokenAlg } from '../db/store'

export type JwsAlg = IdTokenAlg

/** How WebCrypto imports and signs with each algorithm's keys (ES256's signature is r‖s, as JWS wants it). */
export const JWS: Record<JwsAlg, { importAs: RsaHashedImportParams | EcKeyImportParams | Algorithm; signAs: Algorithm | EcdsaParams }> = {
  RS256: { importAs: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, signAs: { name: 'RSASSA-PKCS1-v1_5' } },
  ES256: { importAs: { name: 'ECDSA', namedCurve: 'P-256' }, signAs: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams },
  EdDSA: { importAs: { name: 'Ed25519' }, signAs: { name: 'Ed25519' } },
}

/** A key to sign or verify with, and the algorithm it is for. */
export interface JwsKey {
  kid: string
  key: CryptoKey
  alg: JwsAlg
}

const encoder = new TextEncoder()
const b64url = (bytes: ArrayBuffer | Uint8Array | string) => Buffer.from(typeof bytes === 'string' ? encoder.encode(bytes) : new Uint8Array(bytes)).toString('base64url')

/** `typ` is JWT for ID tokens, at+jwt for access tokens (RFC 9068 §2.1). */
export async function signJwt(payload: Record<string, unknown>, signer: JwsKey, typ = 'JWT'): Promise<string> {
  const input = `${b64url(JSON.stringify({ alg: signer.alg, typ, kid: signer.kid }))}.${b64url(JSON.stringify(payload))}`
  const signature = await crypto.subtle.sign(JWS[signer.alg].signAs, signer.key, encoder.encode(input))
  return `${input}.${b64url(signature)}`
}

export interface VerifiedJwt {
  header: { alg?: string; kid?: string; typ?: string }
  payload: Record<string, unknown>
}

/**
 * The header and payload of a well-formed JWT whose signature one of `keys` (by kid) verifies,
 * with the algorithm that key is for — `alg` is never taken from the token alone (no `none`, no
 * RS256 key used as an HMAC secret, no key used for another algorithm).
 */
export async function verifyJwt(token: string, keys: (kid: string) => JwsKey | undefined): Promise<VerifiedJwt | undefined> {
  const parts = token.split('.')
  if (parts.length !== 3 || token.length > 16_384) return undefined
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as VerifiedJwt['header']
    const key = typeof header.kid === 'string' ? keys(header.kid) : undefined
    if (!key || header.alg !== key.alg) return undefined
    const ok = await crypto.subtle.verify(JWS[key.alg].signAs, key.key, Buffer.from(parts[2]!, 'base64url'), encoder.encode(`${parts[0]}.${parts[1]}`))
    if (!ok) return undefined
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as unknown
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? { header, payload: payload as Record<string, unknown> } : undefined
  } catch {
    return undefined
  }
}
