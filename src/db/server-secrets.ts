import { eq } from 'drizzle-orm'
import { randomToken } from '../lib/crypto'
import type { Db } from './client'
import { serverSecrets } from './schema'

/**
 * A random key the server keeps in its database, made by whichever process asks first (insert
 * if absent, then read), so every instance and every restart uses the same one.
 */
export function serverSecret(db: Db, name: string, now: number): string {
  db.orm.insert(serverSecrets).values({ name, value: randomToken(), createdAt: now }).onConflictDoNothing().run()
  return db.orm.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name)).get()!.value
}
