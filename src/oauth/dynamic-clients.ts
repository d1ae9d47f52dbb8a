import type { AppContext } from '../context'
import { randomToken, sha256 } from '../lib/crypto'

/**
 * What dynamic registration (RFC 7591, `./registration`) needs outside its routes — the CLI's
 * initial access tokens and the server's purge — kept apart so that neither loads the routes.
 */

/** SPEC: a dynamically registered app no authorization used for this long is deleted. */
export const DYNAMIC_CLIENT_UNUSED_MS = 30 * 24 * 3600_000
/** How long `latchkey client registration-token` tokens last. */
export const REGISTRATION_TOKEN_TTL_MS = 7 * 24 * 3600_000
export const REGISTRATION_TOKEN_PREFIX = 'lk_ia_'

/** Issues an initial access token for DYNAMIC_REGISTRATION=token (`latchkey client registration-token`). */
export async function issueRegistrationToken(ctx: Pick<AppContext, 'store'>, now: number): Promise<{ token: string; expiresAt: number }> {
  const token = randomToken(REGISTRATION_TOKEN_PREFIX)
  const expiresAt = now + REGISTRATION_TOKEN_TTL_MS
  await ctx.store.clients.insertRegistrationToken(sha256(token), now, expiresAt)
  return { token, expiresAt }
}
