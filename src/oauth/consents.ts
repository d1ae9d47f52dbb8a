import type { AppContext } from '../context'
import { isClientId } from './clients'

/** "Revoke access": forgets the consent and revokes the app's tokens and pending codes. */
export async function revokeAccess(ctx: AppContext, userId: string, clientId: string, request?: Request): Promise<boolean> {
  if (!isClientId(clientId)) return false
  // The store tells the token cache which tokens went (the change feed).
  const revoked = await ctx.store.grants.revokeAccess(userId, clientId)
  if (revoked) await ctx.audit.record('consent.revoked', { userId, clientId, request })
  return revoked
}
