/**
 * Secrets the server must read back (a TOTP seed) are sealed with AES-256-GCM (WebCrypto): a
 * random 96-bit IV per seal, and associated data binding the sealed value to its row, so a
 * sealed value copied to another user's row does not open.
 */
export type SealKey = CryptoKey

export function sealKeyFrom(secret: string): Promise<SealKey> {
  const raw = Buffer.from(secret, 'base64url')
  if (raw.length !== 32) throw new Error('a seal key is 32 bytes')
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt'])
}

export async function seal(key: SealKey, plaintext: string, boundTo: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: Buffer.from(boundTo) }, key, Buffer.from(plaintext))
  return `v1.${Buffer.from(iv).toString('base64url')}.${Buffer.from(sealed).toString('base64url')}`
}

/** The plaintext, or undefined when the value was tampered with, moved, or sealed under another key. */
export async function unseal(key: SealKey, sealed: string, boundTo: string): Promise<string | undefined> {
  const [version, iv, data] = sealed.split('.')
  if (version !== 'v1' || !iv || !data) return undefined
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: Buffer.from(iv, 'base64url'), additionalData: Buffer.from(boundTo) }, key, Buffer.from(data, 'base64url'))
    return Buffer.from(plain).toString()
  } catch {
    return undefined
  }
}
