/** A random credential of 256 bits, base64url, behind a prefix secret scanners can spot. */
export function randomToken(prefix = ''): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return prefix + Buffer.from(bytes).toString('base64url')
}

/** SHA-256, base64url: how every high-entropy secret is stored. */
export function sha256(value: string): string {
  return Bun.SHA256.hash(value, 'base64url') as unknown as string
}

/** HMAC-SHA256 (RFC 2104), base64url. */
export function hmacSha256(key: string, message: string): string {
  return new Bun.CryptoHasher('sha256', key).update(message).digest('base64url')
}

/**
 * Constant-time comparison of two strings (we compare hashes, so lengths are public): every
 * character is visited whatever differs. Hand-written because loading node:crypto for
 * timingSafeEqual costs every server ~6 MB and ~15 ms of start-up.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/** PKCE S256 transform (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return sha256(verifier)
}

// OWASP's minimum for argon2id: 19 MiB, 2 passes, 1 lane.
const PASSWORD_OPTIONS = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, PASSWORD_OPTIONS)
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash)
}

/** A valid argon2id hash of nothing anyone knows, to spend the same time on unknown emails. */
let decoyHash: Promise<string> | undefined
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(randomToken())
  return decoyHash
}
