import { signerOf, type KeyRemoval, type KeyStore, type SigningKeyRecord } from '../store'
import { lock, n, type PgContext, type Row, type Tx } from './context'

const toKey = (r: Row): SigningKeyRecord => ({
  kid: r.kid as string,
  alg: r.alg as string,
  privateJwk: r.private_jwk as string,
  publicJwk: r.public_jwk as string,
  createdAt: n(r.created_at),
  retiredAt: r.retired_at === null ? null : n(r.retired_at),
  signsFrom: r.signs_from === null ? null : n(r.signs_from),
})

function insertKey(tx: Tx, k: SigningKeyRecord) {
  return tx`INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at, signs_from)
    VALUES (${k.kid}, ${k.alg}, ${k.privateJwk}, ${k.publicJwk}, ${k.createdAt}, ${k.retiredAt}, ${k.signsFrom})`
}

const all = async (tx: Tx): Promise<SigningKeyRecord[]> =>
  (await tx`SELECT kid, alg, private_jwk, public_jwk, created_at, retired_at, signs_from FROM signing_keys ORDER BY created_at DESC, kid DESC`).map(toKey)

/** Key changes run one at a time on every instance (the CLI's rotate beside a starting server). */
export class PgKeys implements KeyStore {
  constructor(private readonly ctx: PgContext) {}

  listSigningKeys(): Promise<SigningKeyRecord[]> {
    return this.ctx.run(all)
  }

  ensureSigningKeys(first: SigningKeyRecord, next: SigningKeyRecord | undefined): Promise<void> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, 'signing-keys')
      const keys = (await all(tx)).filter((k) => k.alg === first.alg)
      if (keys.length === 0) await insertKey(tx, first)
      if (next && !keys.some((k) => k.signsFrom === null)) await insertKey(tx, { ...next, signsFrom: null, retiredAt: null })
    })
  }

  rotateSigningKey(now: number, publishedForMs: number, next: SigningKeyRecord): Promise<SigningKeyRecord> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, 'signing-keys')
      let promoted = (await all(tx)).find((k) => k.alg === next.alg && k.signsFrom === null)
      let waitsNext = true
      if (!promoted) {
        promoted = { ...next, signsFrom: null, retiredAt: null }
        await insertKey(tx, promoted)
        waitsNext = false
      }
      const signsFrom = Math.max(now, promoted.createdAt + publishedForMs)
      await tx`UPDATE signing_keys SET signs_from = ${signsFrom} WHERE kid = ${promoted.kid}`
      // The signing key (and one an earlier rotation set to take over later) retires when this one begins.
      await tx`UPDATE signing_keys SET retired_at = ${signsFrom} WHERE alg = ${next.alg} AND kid <> ${promoted.kid} AND signs_from IS NOT NULL AND retired_at IS NULL`
      if (waitsNext) await insertKey(tx, { ...next, signsFrom: null, retiredAt: null })
      return { ...promoted, signsFrom, retiredAt: null }
    })
  }

  removeSigningKey(kid: string, now: number): Promise<KeyRemoval> {
    return this.ctx.tx(async (tx): Promise<KeyRemoval> => {
      await lock(tx, 'signing-keys')
      const keys = await all(tx)
      const target = keys.find((k) => k.kid === kid)
      if (!target) return 'unknown'
      if (signerOf(keys.filter((k) => k.alg === target.alg), now)?.kid === kid) return 'signing'
      await tx`DELETE FROM signing_keys WHERE kid = ${kid}`
      return 'removed'
    })
  }
}
