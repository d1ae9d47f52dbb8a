import type { KeyObject } from 'node:crypto'
import { signerOf, type KeyRemoval, type SigningKeyRecord, type Store } from '../db/store'
import type { Clock } from '../lib/clock'
import { sha256 } from '../lib/crypto'
import { JWS, type JwsAlg, type JwsKey } from './jwt'

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

/** RFC 7638 JWK thumbprint (its required members, in order): the kid, stable for the key's public half. */
function thumbprint(jwk: JsonWebKey): string {
  const members = jwk.kty === 'RSA' ? { e: jwk.e, kty: jwk.kty, n: jwk.n } : jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x }
  return sha256(JSON.stringify(members)).slice(0, 16)
}

/** node:crypto's name and options for each algorithm's key pair. */
const PAIRS: Record<JwsAlg, ['rsa', { modulusLength: number; publicExponent: number }] | ['ec', { namedCurve: string }] | ['ed25519', {}]> = {
  RS256: ['rsa', { modulusLength: 2048, publicExponent: 0x10001 }],
  ES256: ['ec', { namedCurve: 'P-256' }],
  EdDSA: ['ed25519', {}],
}

/**
 * A new key pair of `alg` as a row: the private JWK stays in the database, never in a log or
 * output. node:crypto's generateKeyPair works off the main thread (WebCrypto's blocks it ~50 ms
 * an RSA key in Bun), so a server making keys goes on answering meanwhile. node:crypto is loaded
 * only here: a server that has its keys never needs it (it costs ~4.7 MB of RSS, measured).
 */
export async function generateSigningKey(now: number, alg: JwsAlg = 'RS256'): Promise<SigningKeyRecord> {
  const [type, options] = PAIRS[alg]
  const { generateKeyPair } = await import('node:crypto')
  const pair = await new Promise<{ publicKey: KeyObject; privateKey: KeyObject }>((resolve, reject) =>
    (generateKeyPair as (type: string, options: object, done: (error: Error | null, publicKey: KeyObject, privateKey: KeyObject) => void) => void)(type, options, (error, publicKey, privateKey) =>
      error ? reject(error) : resolve({ publicKey, privateKey }),
    ),
  )
  const privateJwk = pair.privateKey.export({ format: 'jwk' })
  const { kty, n, e, crv, x, y } = pair.publicKey.export({ format: 'jwk' }) as JsonWebKey
  const publicJwk = Object.fromEntries(Object.entries({ kty, n, e, crv, x, y }).filter(([, v]) => v !== undefined)) as JsonWebKey
  const kid = thumbprint(publicJwk)
  const published = { ...publicJwk, kid, use: 'sig', alg }
  return { kid, alg, privateJwk: JSON.stringify(privateJwk), publicJwk: JSON.stringify(published), createdAt: now, retiredAt: null, signsFrom: now }
}

interface Loaded {
  rows: SigningKeyRecord[]
  /** The key that signs now, for each algorithm that has keys. */
  signing: Map<JwsAlg, JwsKey>
  verifying: Map<string, JwsKey>
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

  /**
   * The first key of `alg` when there is none, and a next one unless one waits; keys are made only
   * when needed. RS256 at start; ES256 and EdDSA when a client first needs them.
   */
  async ensure(alg: JwsAlg = 'RS256'): Promise<void> {
    const keys = (await this.store.keys.listSigningKeys()).filter((k) => k.alg === alg)
    const now = this.clock.now()
    if (keys.length === 0 || !keys.some((k) => k.signsFrom === null))
      await this.store.keys.ensureSigningKeys(keys.length === 0 ? await generateSigningKey(now, alg) : keys[0]!, await generateSigningKey(now, alg))
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
   * `keys rotate`, every algorithm together: each next key signs — at once when it has been
   * published long enough (the usual case: since the last rotation or the first start), else as
   * soon as it has — and a new next key is published. Each signing key retires at that moment.
   * Returns the promoted keys, RS256's first.
   */
  async rotate(): Promise<SigningKeyRecord[]> {
    const algs = [...new Set(['RS256', ...(await this.store.keys.listSigningKeys()).map((k) => k.alg)])] as JwsAlg[]
    const promoted: SigningKeyRecord[] = []
    for (const alg of algs) promoted.push(await this.store.keys.rotateSigningKey(this.clock.now(), PUBLISHED_BEFORE_SIGNING_MS, await generateSigningKey(this.clock.now(), alg)))
    await this.reload()
    return promoted
  }

  /** `keys remove`: a compromised key goes at once (never the signing one). */
  async remove(kid: string): Promise<KeyRemoval> {
    const removed = await this.store.keys.removeSigningKey(kid, this.clock.now())
    await this.reload()
    return removed
  }

  /** The key that signs `alg` now; the first use of an algorithm makes its keys (a few ms for EC). */
  async signingKey(alg: JwsAlg = 'RS256'): Promise<JwsKey> {
    const signer = (await this.current()).signing.get(alg)
    if (signer) return signer
    await this.ensure(alg)
    const made = (await this.reload()).signing.get(alg)
    if (!made) throw new Error(`no ${alg} signing key`)
    return made
  }

  /** The public keys a verifier may meet: signing, next, and retired ones within the overlap. */
  async published(): Promise<Array<Record<string, unknown>>> {
    const { rows } = await this.current()
    return this.trusted(rows).map((r) => JSON.parse(r.publicJwk) as Record<string, unknown>)
  }

  /** The keys an id_token_hint may be signed with: the published ones (an expired hint still counts). */
  async verifier(): Promise<(kid: string) => JwsKey | undefined> {
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
    if (!signerOf(rows.filter((r) => r.alg === 'RS256'), now)) throw new Error('no ID-token signing key; the server makes one at start')
    const previous = this.loaded
    const verifying = new Map<string, JwsKey>()
    const signing = new Map<JwsAlg, JwsKey>()
    for (const r of rows) {
      const alg = r.alg as JwsAlg
      verifying.set(r.kid, previous?.verifying.get(r.kid) ?? { kid: r.kid, alg, key: await crypto.subtle.importKey('jwk', JSON.parse(r.publicJwk), JWS[alg].importAs, false, ['verify']) })
    }
    for (const alg of new Set(rows.map((r) => r.alg as JwsAlg))) {
      const newest = signerOf(rows.filter((r) => r.alg === alg), now)
      if (!newest) continue
      const kept = previous?.signing.get(alg)
      signing.set(alg, kept?.kid === newest.kid ? kept : { kid: newest.kid, alg, key: await crypto.subtle.importKey('jwk', JSON.parse(newest.privateJwk), JWS[alg].importAs, false, ['sign']) })
    }
    // The next moment another key begins to sign.
    const signerUntil = Math.min(...rows.map((r) => (r.signsFrom !== null && r.signsFrom > now ? r.signsFrom : Infinity)))
    this.loaded = { rows, signing, verifying, at: now, signerUntil }
    return this.loaded
  }
}
