/** An ID-token signing key; the private half never leaves the server. */
export interface SigningKeyRecord {
  kid: string
  alg: string
  privateJwk: string
  publicJwk: string
  createdAt: number
  /** When a newer key took over signing; null while it has not been replaced. */
  retiredAt: number | null
  /** When it signs from; null for the next key, published but not signing yet. */
  signsFrom: number | null
}

/** What removing a key found. */
export type KeyRemoval = 'removed' | 'signing' | 'unknown'

export interface KeyStore {
  /** Every key, newest first. */
  listSigningKeys(): Promise<SigningKeyRecord[]>
  /**
   * At start (RS256), or when a client first needs another algorithm, in one write (instances
   * agree): `first` signs at once when there is no key of its algorithm (nobody can have cached
   * one), and `next` waits, published, unless a key of that algorithm already does.
   */
  ensureSigningKeys(first: SigningKeyRecord, next: SigningKeyRecord | undefined): Promise<void>
  /**
   * Rotation of `next`'s algorithm, in one write: its waiting key (or `next` itself when none
   * waits) signs from max(now, its creation + `publishedForMs`); its signing key retires at that
   * moment; `next` waits in turn. Returns the promoted key.
   */
  rotateSigningKey(now: number, publishedForMs: number, next: SigningKeyRecord): Promise<SigningKeyRecord>
  /** Deletes a key at once (a compromised one) — never one signing at `now` for its algorithm. */
  removeSigningKey(kid: string, now: number): Promise<KeyRemoval>
}

/** The key that signs at `now`: of those whose signing has begun, the latest to begin. */
export function signerOf(keys: readonly SigningKeyRecord[], now: number): SigningKeyRecord | undefined {
  let signer: SigningKeyRecord | undefined
  for (const key of keys) if (key.signsFrom !== null && key.signsFrom <= now && (!signer || key.signsFrom > signer.signsFrom!)) signer = key
  return signer
}
