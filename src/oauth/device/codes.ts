import { sha256 } from '../../lib/crypto'

/** RFC 8628 §6.1: consonants only (no vowels: no words), no easily confused letters. */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
const LENGTH = 8

/** Eight letters drawn without bias (bytes past the last whole multiple of 20 are drawn again). */
export function newUserCode(): string {
  let code = ''
  while (code.length < LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      if (byte < 240 && code.length < LENGTH) code += ALPHABET[byte % ALPHABET.length]
    }
  }
  return code
}

/** As shown: XXXX-XXXX. */
export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`

/** As typed: case, spaces and hyphens ignored; undefined when it cannot be a user code. */
export function normalizeUserCode(raw: string): string | undefined {
  const code = raw.toUpperCase().replace(/[\s-]/g, '')
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : undefined
}

/** Stored as a hash, as every secret here. */
export const userCodeHash = (code: string) => sha256(`user_code:${code}`)
