import type { Config } from '../config'
import type { EmailPurpose, EmailToken, Store } from '../db/store'
import { inviteMessage, notify, twoStepChangedMessage, recipient } from '../mail/messages'
import { insertUser, type User } from './users'
import { randomToken, sha256 } from '../lib/crypto'

/** How long a link works (SPEC): verify and an email change 24 h, reset 30 min, invitation 7 days. */
export const LINK_TTL_MS: Record<EmailPurpose, number> = { verify: 24 * 3600_000, reset: 30 * 60_000, invite: 7 * 24 * 3600_000, change: 24 * 3600_000 }

const PATHS: Record<EmailPurpose, string> = { verify: '/verify-email', reset: '/reset-password', invite: '/reset-password', change: '/confirm-email' }

/**
 * A new link: 256 random bits in the URL, only their SHA-256 in the database, bound to its
 * purpose. `returnTo` (a verify link under EMAIL_VERIFICATION=required): where the user was going,
 * a same-origin path the link continues to once used.
 */
export function newLink(config: Config, purpose: EmailPurpose, userId: string, email: string, now: number, returnTo?: string): { url: string; token: EmailToken } {
  const raw = randomToken()
  const then = returnTo ? `&return_to=${encodeURIComponent(returnTo)}` : ''
  return {
    url: `${config.issuer}${PATHS[purpose]}?token=${raw}${then}`,
    token: { tokenHash: sha256(raw), userId, purpose, email, expiresAt: now + LINK_TTL_MS[purpose] },
  }
}

/** The stored form of a link's token as it came in the URL or form; undefined when it cannot be one. */
export function linkTokenHash(raw: unknown): string | undefined {
  return typeof raw === 'string' && /^[A-Za-z0-9_-]{43}$/.test(raw) ? sha256(raw) : undefined
}

/**
 * A user without a password and a 7-day link to choose one (an invitation), written together:
 * mailed when `mail` (the message goes out through the outbox), otherwise only returned, for the
 * operator to hand over. Throws EmailTakenError for a known address.
 */
export async function inviteUser(
  store: Store,
  config: Config,
  input: { email: string; fullName: string },
  now: number,
  mail: boolean,
): Promise<{ user: User; url: string }> {
  let url = ''
  const user = await insertUser(store, { email: input.email, fullName: input.fullName, avatarUrl: null, passwordHash: '' }, now, (u) => {
    const link = newLink(config, 'invite', u.id, input.email, now)
    url = link.url
    return { token: link.token, mail: mail ? inviteMessage(recipient(config, { email: input.email }), input.fullName, link.url) : null }
  })
  return { user, url }
}

/** For a user who lost their phone: TOTP and recovery codes go, and so do their sessions; they are told. False: no such user. */
export async function resetTwoStep(store: Store, config: Config, id: string, now: number): Promise<boolean> {
  const user = await store.users.findUser(id)
  if (!user) return false
  await store.mfa.removeTotp(id)
  await store.sessions.deleteSessionsOf(id)
  await notify(config, store, twoStepChangedMessage(recipient(config, user), 'adminReset'), now)
  return true
}
