import type { Config } from '../config'
import type { EmailPurpose, EmailToken } from '../db/store'
import { randomToken, sha256 } from '../lib/crypto'

/** How long a link works (SPEC): verify 24 h, reset 30 min, invitation 7 days. */
export const LINK_TTL_MS: Record<EmailPurpose, number> = { verify: 24 * 3600_000, reset: 30 * 60_000, invite: 7 * 24 * 3600_000 }

const PATHS: Record<EmailPurpose, string> = { verify: '/verify-email', reset: '/reset-password', invite: '/reset-password' }

/** A new link: 256 random bits in the URL, only their SHA-256 in the database, bound to its purpose. */
export function newLink(config: Config, purpose: EmailPurpose, userId: string, email: string, now: number): { url: string; token: EmailToken } {
  const raw = randomToken()
  return {
    url: `${config.issuer}${PATHS[purpose]}?token=${raw}`,
    token: { tokenHash: sha256(raw), userId, purpose, email, expiresAt: now + LINK_TTL_MS[purpose] },
  }
}

/** The stored form of a link's token as it came in the URL or form; undefined when it cannot be one. */
export function linkTokenHash(raw: unknown): string | undefined {
  return typeof raw === 'string' && /^[A-Za-z0-9_-]{43}$/.test(raw) ? sha256(raw) : undefined
}
