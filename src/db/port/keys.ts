/** An ID-token signing key; the private half never leaves the server. */
export interface SigningKeyRecord {
  kid: string
  alg: string
  privateJwk: string
  publicJwk: string
  createdAt: number
  /** When a newer key replaced it; null for the current key. */
  retiredAt: number | null
}

export interface KeyStore {
  /** Every key, newest first. */
  listSigningKeys(): Promise<SigningKeyRecord[]>
  /** Makes `key` current and retires the current one, in one write. */
  rotateSigningKey(key: SigningKeyRecord): Promise<void>
  /** Inserts `key` as the first key unless one exists (instances starting together make one). */
  ensureSigningKey(key: SigningKeyRecord): Promise<void>
}
