import { desc, isNull } from 'drizzle-orm'
import type { KeyStore, SigningKeyRecord } from '../store'
import type { SqliteContext } from './context'
import { signingKeys } from './schema'

export class SqliteKeys implements KeyStore {
  constructor(private readonly ctx: SqliteContext) {}

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    return this.ctx.db.orm.select().from(signingKeys).orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid)).all()
  }

  rotateSigningKey(key: SigningKeyRecord): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      db.orm.update(signingKeys).set({ retiredAt: key.createdAt }).where(isNull(signingKeys.retiredAt)).run()
      db.orm.insert(signingKeys).values(key).run()
    })
  }

  ensureSigningKey(key: SigningKeyRecord): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      if (!db.orm.select({ kid: signingKeys.kid }).from(signingKeys).limit(1).get()) db.orm.insert(signingKeys).values(key).run()
    })
  }
}
