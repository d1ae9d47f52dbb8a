import { and, eq } from 'drizzle-orm'
import { changes, type Db } from '../db/client'
import { clients, consents } from '../db/schema'
import { deleteCodesOf } from './codes'
import { SUPPORTED_SCOPES } from './scopes'
import type { AccessTokens } from './tokens'

export interface AuthorizedApp {
  clientId: string
  name: string
  scopes: string[]
  grantedAt: number
}

export function grantedScopes(db: Db, userId: string, clientId: string): string[] {
  const row = db.orm
    .select({ scope: consents.scope })
    .from(consents)
    .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
    .get()
  return row ? row.scope.split(' ') : []
}

/** Remembers consent: the union of what was granted before and now. Call in a write job. */
export function rememberConsent(db: Db, userId: string, clientId: string, scopes: readonly string[], now: number): void {
  const all = new Set([...grantedScopes(db, userId, clientId), ...scopes])
  const scope = SUPPORTED_SCOPES.filter((s) => all.has(s)).join(' ')
  db.orm
    .insert(consents)
    .values({ userId, clientId, scope, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [consents.userId, consents.clientId], set: { scope, updatedAt: now } })
    .run()
}

export function listAuthorizedApps(db: Db, userId: string): AuthorizedApp[] {
  return db.orm
    .select({ clientId: consents.clientId, name: clients.name, scope: consents.scope, grantedAt: consents.updatedAt })
    .from(consents)
    .innerJoin(clients, eq(clients.id, consents.clientId))
    .where(eq(consents.userId, userId))
    .orderBy(clients.name)
    .all()
    .map((r) => ({ clientId: r.clientId, name: r.name, scopes: r.scope.split(' '), grantedAt: r.grantedAt }))
}

/** "Revoke access": forgets the consent and revokes the app's tokens and pending codes. Call in a write job. */
export function revokeAccess(db: Db, tokens: AccessTokens, userId: string, clientId: string): boolean {
  const removed = changes(db.orm
    .delete(consents)
    .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
    .run())
  const revoked = tokens.revokeGrant(userId, clientId)
  deleteCodesOf(db, userId, clientId)
  return removed + revoked > 0
}
