import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import { signerOf, type KeyRemoval, type KeyStore, type SigningKeyRecord } from '../store'
import type { SqliteContext } from './context'
import { signingKeys } from './schema'

export class SqliteKeys implements KeyStore {
  constructor(private readonly ctx: SqliteContext) {}

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    return this.all()
  }

  private all(): SigningKeyRecord[] {
    return this.ctx.db.orm.select().from(signingKeys).orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid)).all()
  }

  ensureSigningKeys(first: SigningKeyRecord, next: SigningKeyRecord | undefined): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      const ofAlg = eq(signingKeys.alg, first.alg)
      if (!db.orm.select({ kid: signingKeys.kid }).from(signingKeys).where(ofAlg).limit(1).get()) db.orm.insert(signingKeys).values(first).run()
      const waiting = db.orm.select({ kid: signingKeys.kid }).from(signingKeys).where(and(ofAlg, isNull(signingKeys.signsFrom))).limit(1).get()
      if (next && !waiting) db.orm.insert(signingKeys).values({ ...next, signsFrom: null, retiredAt: null }).run()
    })
  }

  rotateSigningKey(now: number, publishedForMs: number, next: SigningKeyRecord): Promise<SigningKeyRecord> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      const keys = this.all()
      let promoted = keys.find((k) => k.alg === next.alg && k.signsFrom === null)
      let waitsNext = true
      if (!promoted) {
        promoted = { ...next, signsFrom: null, retiredAt: null }
        db.orm.insert(signingKeys).values(promoted).run()
        waitsNext = false
      }
      const signsFrom = Math.max(now, promoted.createdAt + publishedForMs)
      db.orm.update(signingKeys).set({ signsFrom }).where(eq(signingKeys.kid, promoted.kid)).run()
      // The signing key (and one an earlier rotation set to take over later) retires when this one begins.
      db.orm
        .update(signingKeys)
        .set({ retiredAt: signsFrom })
        .where(sql`${signingKeys.alg} = ${next.alg} AND ${signingKeys.kid} != ${promoted.kid} AND ${signingKeys.signsFrom} IS NOT NULL AND ${signingKeys.retiredAt} IS NULL`)
        .run()
      if (waitsNext) db.orm.insert(signingKeys).values({ ...next, signsFrom: null, retiredAt: null }).run()
      return { ...promoted, signsFrom, retiredAt: null }
    })
  }

  removeSigningKey(kid: string, now: number): Promise<KeyRemoval> {
    const { db } = this.ctx
    return this.ctx.write((): KeyRemoval => {
      const keys = this.all()
      const target = keys.find((k) => k.kid === kid)
      if (!target) return 'unknown'
      if (signerOf(keys.filter((k) => k.alg === target.alg), now)?.kid === kid) return 'signing'
      db.orm.delete(signingKeys).where(eq(signingKeys.kid, kid)).run()
      return 'removed'
    })
  }
}
