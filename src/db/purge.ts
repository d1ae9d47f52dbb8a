import { lt } from 'drizzle-orm'
import { changes, type Db } from './client'
import { accessTokens, authCodes, sessions } from './schema'

/**
 * Deletes expired tokens, sessions and codes. Used codes are kept while a token issued from
 * them could still be alive, so a replay can still revoke it (RFC 6749 §4.1.2).
 */
export function purgeExpired(db: Db, now: number, accessTokenTtlSeconds: number): number {
  let removed = 0
  removed += changes(db.orm.delete(accessTokens).where(lt(accessTokens.expiresAt, now)).run())
  removed += changes(db.orm.delete(sessions).where(lt(sessions.expiresAt, now)).run())
  removed += changes(db.orm.delete(authCodes).where(lt(authCodes.expiresAt, now - accessTokenTtlSeconds * 1000)).run())
  return removed
}
