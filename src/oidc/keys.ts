import { generateKeyPair, type KeyObject } from 'node:crypto'
import { signerOf, type KeyRemoval, type SigningKeyRecord, type Store } from '../db/store'
import type { Clock } from '../lib/clock'
import { sha256 } from '../lib/crypto'

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const
/** How often a running server looks for a key rotated by `latchkey keys rotate` (SPEC: within seconds). */
const RELOAD_MS = 5_000
/** The JWKS's Cache-Control max-age, seconds. */
export const JWKS_MAX_AGE = 300
/**
 * How long the next key is published before it may sign: past the JWKS max-age and the minute
 * some relying parties wait before they fetch a JWKS again (openid-client v5, better-auth), so
 * none meets a kid it has not seen.
 */
export const PUBLISHED_BEFORE_SIGNING_MS = (JWKS_MAX_AGE + 60) * 1000

/** RFC 7638 JWK thumbprint: the kid, stable for the key's public half. */
function thumbprint(jwk: JsonWebKey): string {
  return sha256(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n })).slice(0, 16)
}

/**
 * A new RS256 key pair as a row: the private JWK stays in the database, never in a log or output.
 * node:crypto's generateKeyPair works off the main thread (WebCrypto's blocks it ~50 ms a key in
 * Bun), so a server making its first keys goes on answering meanwhile.
 */
export async function generateSigningKey(now: number): Promise<SigningKeyRecord> {
  const pair = await new Promise<{ publicKey: KeyObject; privateKey: KeyObject }>((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength: 2048, publicExponent: 0x10001 }, (error, publicKey, privateKey) => (error ? reject(error) : resolve({ publicKey, privateKey }))),
  )
  const privateJwk = pair.privateKey.export({ format: 'jwk' })
  const publicJwk = pair.publicKey.export({ format: 'jwk' }) as JsonWebKey
  const kid = thumbprint(publicJwk)
  const published = { kty: publicJwk.kty, n: publicJwk.n, e: publicJwk.e, kid, use: 'sig', alg: 'RS256' }
  return { kid, alg: 'RS256', privateJwk: JSON.stringify(privateJwk), publicJwk: JSON.stringify(published), createdAt: now, retiredAt: null, signsFrom: now }
}

interface Loaded {
  rows: SigningKeyRecord[]
  signing: { kid: string; key: CryptoKey }
  verifying: Map<string, CryptoKey>
  at: number
  /** When a key set to take over begins to sign (Infinity: none). */
  signerUntil: number
}

/**
 * The ID-token signing keys of this server, imported once per key (not per request). Three kinds:
 * the key that signs; the next key, published in the JWKS well before `keys rotate` lets it sign
 * (PUBLISHED_BEFORE_SIGNING_MS); retired keys, published and trusted for id_token_hint while an
 * ID token they signed may live (`overlapMs`), then deleted by the purge. Every instance notices
 * a rotation within RELOAD_MS.
 */
export class SigningKeys {
  private loaded: Loaded | undefined
  private loading: Promise<Loaded> | undefined
  /** The start's key making, while it runs: whatever needs a key waits for it. */
  private making: Promise<void> | undefined

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** How long an ID token lives: a retired key is published that much longer. */
    readonly overlapMs: number,
  ) {}

  /** The first key when there is none, and a next key unless one waits. RSA keys are made only when needed. */
  async ensure(): Promise<void> {
    const keys = await this.store.keys.listSigningKeys()
    const now = this.clock.now()
    if (keys.length === 0 || !keys.some((k) => k.signsFrom === null))
      await this.store.keys.ensureSigningKeys(keys.length === 0 ? await generateSigningKey(now) : keys[0]!, await generateSigningKey(now))
    await this.load()
  }

  /**
   * At start, without waiting: a first start makes its RSA keys (~100 ms) while the server
   * already answers; an ID token, the JWKS or a JWT access token wait for them. A failure (the
   * database away) is tried again by the first thing that needs a key.
   */
  start(): void {
    const making = this.ensure().finally(() => {
      if (this.making === making) this.making = undefined
    })
    this.making = making
    making.catch(() => {})
  }

  /**
   * `keys rotate`: the next key signs — at once when it has been published long enough (the
   * usual case: since the last rotation or the first start), else as soon as it has — and a new
   * next key is published. The signing key retires at that moment.
   */
  async rotate(): Promise<SigningKeyRecord> {
    const key = await this.store.keys.rotateSigningKey(this.clock.now(), PUBLISHED_BEFORE_SIGNING_MS, await generateSigningKey(this.clock.now()))
    await this.reload()
    return key
  }

  /** `keys remove`: a compromised key goes at once (never the signing one). */
  async remove(kid: string): Promise<KeyRemoval> {
    const removed = await this.store.keys.removeSigningKey(kid, this.clock.now())
    await this.reload()
    return removed
  }

  async signingKey(): Promise<{ kid: string; key: CryptoKey }> {
    return (await this.current()).signing
  }

  /** The public keys a verifier may meet: signing, next, and retired ones within the overlap. */
  async published(): Promise<Array<Record<string, unknown>>> {
    const { rows } = await this.current()
    return this.trusted(rows).map((r) => JSON.parse(r.publicJwk) as Record<string, unknown>)
  }

  /** The keys an id_token_hint may be signed with: the published ones (an expired hint still counts). */
  async verifier(): Promise<(kid: string) => CryptoKey | undefined> {
    const { rows, verifying } = await this.current()
    const trusted = new Set(this.trusted(rows).map((r) => r.kid))
    return (kid) => (trusted.has(kid) ? verifying.get(kid) : undefined)
  }

  private trusted(rows: readonly SigningKeyRecord[]): SigningKeyRecord[] {
    const since = this.clock.now() - this.overlapMs
    return rows.filter((r) => r.retiredAt === null || r.retiredAt > since)
  }

  private async current(): Promise<Loaded> {
    const loaded = this.loaded
    // A rotation that lets its key sign later is taken up when that moment comes, without waiting for a reload.
    if (loaded && this.clock.now() - loaded.at < RELOAD_MS && this.clock.now() < loaded.signerUntil) return loaded
    return this.reload()
  }

  private reload(): Promise<Loaded> {
    this.loading ??= this.afterStart().finally(() => (this.loading = undefined))
    return this.loading
  }

  private async afterStart(): Promise<Loaded> {
    if (this.making) await this.making.catch(() => this.ensure())
    return this.load()
  }

  private async load(): Promise<Loaded> {
    const rows = await this.store.keys.listSigningKeys()
    const now = this.clock.now()
    const newest = signerOf(rows, now)
    if (!newest) throw new Error('no ID-token signing key; the server makes one at start')
    const previous = this.loaded?.verifying
    const verifying = new Map<string, CryptoKey>()
    for (const r of rows)
      verifying.set(r.kid, previous?.get(r.kid) ?? (await crypto.subtle.importKey('jwk', JSON.parse(r.publicJwk), RSA, false, ['verify'])))
    const signing =
      this.loaded?.signing.kid === newest.kid
        ? this.loaded.signing
        : { kid: newest.kid, key: await crypto.subtle.importKey('jwk', JSON.parse(newest.privateJwk), RSA, false, ['sign']) }
    // The next moment another key begins to sign.
    const signerUntil = Math.min(...rows.map((r) => (r.signsFrom !== null && r.signsFrom > now ? r.signsFrom : Infinity)))
    this.loaded = { rows, signing, verifying, at: now, signerUntil }
    return this.loaded
  }
}
