import { eq, sql, and, isNull } from 'drizzle-orm'
import { changes, type Db } from '../db/client'
import { prepared } from '../db/prepared'
import { authCodes } from '../db/schema'
import { randomToken, sha256 } from '../lib/crypto'

export interface CodeGrant {
  clientId: string
  userId: string
  redirectUri: string
  scope: string
  codeChallenge: string | null
}

/** Issues a single-use code bound to client, user, redirect_uri, scope and PKCE challenge. Call in a write job. */
export function issueCode(db: Db, grant: CodeGrant, now: number, ttlSeconds: number): string {
  const code = randomToken()
  prepared(db, 'insertCode', () =>
    db.orm
      .insert(authCodes)
      .values({
        codeHash: sql.placeholder('codeHash'),
        clientId: sql.placeholder('clientId'),
        userId: sql.placeholder('userId'),
        redirectUri: sql.placeholder('redirectUri'),
        scope: sql.placeholder('scope'),
        codeChallenge: sql.placeholder('codeChallenge'),
        expiresAt: sql.placeholder('expiresAt'),
      })
      .prepare(),
  ).run({ ...grant, codeHash: sha256(code), expiresAt: now + ttlSeconds * 1000 })
  return code
}

export function findCode(db: Db, codeHash: string) {
  return prepared(db, 'codeByHash', () =>
    db.orm.select().from(authCodes).where(eq(authCodes.codeHash, sql.placeholder('codeHash'))).prepare(),
  ).get({ codeHash })
}

/** Marks a code used by the token it was exchanged for; false when it already was used. */
export function markCodeUsed(db: Db, codeHash: string, now: number, tokenId: number): boolean {
  return (
    changes(prepared(db, 'useCode', () =>
      db.orm
        .update(authCodes)
        .set({ usedAt: sql.placeholder('now') as unknown as number, tokenId: sql.placeholder('tokenId') as unknown as number })
        .where(and(eq(authCodes.codeHash, sql.placeholder('codeHash')), isNull(authCodes.usedAt)))
        .prepare(),
    ).run({ codeHash, now, tokenId })) === 1
  )
}

/** Deletes the unused codes of a user for a client, when they revoke its access. */
export function deleteCodesOf(db: Db, userId: string, clientId: string): void {
  db.orm.delete(authCodes).where(and(eq(authCodes.userId, userId), eq(authCodes.clientId, clientId))).run()
}
