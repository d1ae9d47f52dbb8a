import type { SigningKeyRecord, Store } from '../db/store'
import type { Clock } from '../lib/clock'
import { sha256 } from '../lib/crypto'

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const
/** How often a running server looks for a key rotated by `latchkey keys rotate` (SPEC: within seconds). */
const RELOAD_MS = 5_000

/** RFC 7638 JWK thumbprint: the kid, stable for the key's public half. */
function thumbprint(jwk: JsonWebKey): string {
  return sha256(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n })).slice(0, 16)
}

/** A new RS256 key pair as a row: the private JWK stays in the database, never in a log or output. */
export async function generateSigningKey(now: number): Promise<SigningKeyRecord> {
  const pair = (await crypto.subtle.generateKey({ ...RSA, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['sign', 'verify'])) as CryptoKeyPair
  const privateJwk = await crypto.subtle.exportKey('jwk', pair.privateKey)
  const publicJwk = await crypto.subtle.exportKey('jwk', pair.publicKey)
  const kid = thumbprint(publicJwk)
  const published = { kty: publicJwk.kty, n: publicJwk.n, e: publicJwk.e, kid, use: 'sig', alg: 'RS256' }
  return { kid, alg: 'RS256', privateJwk: JSON.stringify(privateJwk), publicJwk: JSON.stringify(published), createdAt: now, retiredAt: null }
}

interface Loaded {
  rows: SigningKeyRecord[]
  signing: { kid: string; key: CryptoKey }
  verifying: Map<string, CryptoKey>
  at: number
}

/**
 * The ID-token signing keys of this server: imported once per key (not per request), the
 * newest signs, and every instance notices a rotation within RELOAD_MS. A retired key stays
 * published until every ID token it signed has expired (`overlapMs` after its retirement).
 */
export class SigningKeys {
  private loaded: Loaded | undefined
  private loading: Promise<Loaded> | undefined

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** How long an ID token lives: a retired key is published that much longer. */
    readonly overlapMs: number,
  ) {}

  /** Makes the first key when there is none (first start; instances starting together make one). */
  async ensure(): Promise<void> {
    if ((await this.store.keys.listSigningKeys()).length === 0) await this.store.keys.ensureSigningKey(await generateSigningKey(this.clock.now()))
    await this.reload()
  }

  /** A new current key; the previous one is retired (still published for `overlapMs`). */
  async rotate(): Promise<SigningKeyRecord> {
    const key = await generateSigningKey(this.clock.now())
    await this.store.keys.rotateSigningKey(key)
    await this.reload()
    return key
  }

  async signingKey(): Promise<{ kid: string; key: CryptoKey }> {
    return (await this.current()).signing
  }

  /** The public keys a verifier may meet: current, and retired ones still within the overlap. */
  async published(): Promise<Array<Record<string, unknown>>> {
    const { rows } = await this.current()
    const since = this.clock.now() - this.overlapMs
    return rows.filter((r) => r.retiredAt === null || r.retiredAt > since).map((r) => JSON.parse(r.publicJwk) as Record<string, unknown>)
  }

  /** Every key the database still holds, for verifying an id_token_hint (which may be expired). */
  async verifier(): Promise<(kid: string) => CryptoKey | undefined> {
    const { verifying } = await this.current()
    return (kid) => verifying.get(kid)
  }

  private async current(): Promise<Loaded> {
    const loaded = this.loaded
    if (loaded && this.clock.now() - loaded.at < RELOAD_MS) return loaded
    return this.reload()
  }

  private reload(): Promise<Loaded> {
    this.loading ??= this.load().finally(() => (this.loading = undefined))
    return this.loading
  }

  private async load(): Promise<Loaded> {
    const rows = await this.store.keys.listSigningKeys()
    if (rows.length === 0) throw new Error('no ID-token signing key; the server makes one at start')
    const previous = this.loaded?.verifying
    const verifying = new Map<string, CryptoKey>()
    for (const r of rows)
      verifying.set(r.kid, previous?.get(r.kid) ?? (await crypto.subtle.importKey('jwk', JSON.parse(r.publicJwk), RSA, false, ['verify'])))
    // The current key is the one not retired (creation times may tie).
    const newest = rows.find((r) => r.retiredAt === null) ?? rows[0]!
    const signing =
      this.loaded?.signing.kid === newest.kid
        ? this.loaded.signing
        : { kid: newest.kid, key: await crypto.subtle.importKey('jwk', JSON.parse(newest.privateJwk), RSA, false, ['sign']) }
    this.loaded = { rows, signing, verifying, at: this.clock.now() }
    return this.loaded
  }
}
