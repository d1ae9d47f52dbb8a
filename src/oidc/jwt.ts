/** Compact JWS (RFC 7515) with RS256 (RFC 7518 §3.3), on the platform's WebCrypto. */

const ALGORITHM = { name: 'RSASSA-PKCS1-v1_5' } as const
const encoder = new TextEncoder()
const b64url = (bytes: ArrayBuffer | Uint8Array | string) => Buffer.from(typeof bytes === 'string' ? encoder.encode(bytes) : new Uint8Array(bytes)).toString('base64url')

/** `typ` is JWT for ID tokens, at+jwt for access tokens (RFC 9068 §2.1). */
export async function signJwt(payload: Record<string, unknown>, key: CryptoKey, kid: string, typ = 'JWT'): Promise<string> {
  const input = `${b64url(JSON.stringify({ alg: 'RS256', typ, kid }))}.${b64url(JSON.stringify(payload))}`
  const signature = await crypto.subtle.sign(ALGORITHM, key, encoder.encode(input))
  return `${input}.${b64url(signature)}`
}

export interface VerifiedJwt {
  header: { alg?: string; kid?: string; typ?: string }
  payload: Record<string, unknown>
}

/** The header and payload of a well-formed RS256 JWT whose signature one of `keys` (by kid) verifies. */
export async function verifyJwt(token: string, keys: (kid: string) => CryptoKey | undefined): Promise<VerifiedJwt | undefined> {
  const parts = token.split('.')
  if (parts.length !== 3 || token.length > 16_384) return undefined
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as VerifiedJwt['header']
    const key = header.alg === 'RS256' && typeof header.kid === 'string' ? keys(header.kid) : undefined
    if (!key) return undefined
    const ok = await crypto.subtle.verify(ALGORITHM, key, Buffer.from(parts[2]!, 'base64url'), encoder.encode(`${parts[0]}.${parts[1]}`))
    if (!ok) return undefined
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as unknown
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? { header, payload: payload as Record<string, unknown> } : undefined
  } catch {
    return undefined
  }
}
