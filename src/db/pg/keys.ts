import type { KeyStore, SigningKeyRecord } from '../store'
import { lock, n, type PgContext, type Row, type Tx } from './context'

function insertKey(tx: Tx, k: SigningKeyRecord) {
  return tx`INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at)
    VALUES (${k.kid}, ${k.alg}, ${k.privateJwk}, ${k.publicJwk}, ${k.createdAt}, ${k.retiredAt})`
}

export class PgKeys implements KeyStore {
  constructor(private readonly ctx: PgContext) {}

  listSigningKeys(): Promise<SigningKeyRecord[]> {
    return this.ctx.run(async (sql) =>
      (await sql`SELECT kid, alg, private_jwk, public_jwk, created_at, retired_at FROM signing_keys ORDER BY created_at DESC, kid DESC`).map((r: Row) => ({
        kid: r.kid as string,
        alg: r.alg as string,
        privateJwk: r.private_jwk as string,
        publicJwk: r.public_jwk as string,
        createdAt: n(r.created_at),
        retiredAt: r.retired_at === null ? null : n(r.retired_at),
      })),
    )
  }

  rotateSigningKey(key: SigningKeyRecord): Promise<void> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, 'signing-keys')
      await tx`UPDATE signing_keys SET retired_at = ${key.createdAt} WHERE retired_at IS NULL`
      await insertKey(tx, key)
    })
  }

  ensureSigningKey(key: SigningKeyRecord): Promise<void> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, 'signing-keys')
      const [any] = await tx`SELECT kid FROM signing_keys LIMIT 1`
      if (!any) await insertKey(tx, key)
    })
  }
}
