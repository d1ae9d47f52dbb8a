/**
 * Who a provider's answer signs in (SPEC "Sign in with another account", Linking). An identity
 * is the provider and its subject — never an email alone:
 *  1. a linked identity signs in its user, whatever address the provider names today (a changed
 *     email claim never moves an identity);
 *  2. connecting from /account links it to the signed-in user;
 *  3. else, with --link-verified-email, an address the provider says it verified that is a local
 *     account's verified address links to that account, and the user is told by mail;
 *  4. else, with --allow-create, a new account (email_verified as the provider says);
 *  5. else a page explains how to connect it from /account.
 * An unverified address never links (3 needs both verified) and never makes a verified account
 * (4 copies the provider's word); a domain outside --allowed-domain is refused before any of it.
 */
import type { PageErrorKey } from '../i18n/types'
import type { AppContext } from '../context'
import { ProviderMoved, UniqueViolation, originOf, type ProviderRecord } from '../db/store'
import { UserInputError, checkFullName, normalizeEmail } from '../accounts/users'
import { newSignInMethodMessage, recipient } from '../mail/messages'
import type { UpstreamAccount } from './relying-party'

export type Settled =
  | { kind: 'sign-in'; userId: string; how: 'identity' | 'verified-email' | 'created' }
  | { kind: 'connected'; userId: string }
  | { kind: 'refused'; status: number; key: PageErrorKey; params?: Readonly<Record<string, string>>; reason: string }

const refused = (status: number, reason: string, key: PageErrorKey, params?: Readonly<Record<string, string>>): Settled => ({ kind: 'refused', status, key, params, reason })

/**
 * The provider's address in Latchkey's one spelling, or null when it has none that could be an
 * account's. The provider vouches for the address as it spells it: one that Latchkey's spelling
 * changes beyond letter case (NFKC folds `ａnn@` or `ªnn@` into `ann@`, another mailbox to a mail
 * server — RFC 6531) is none, so it never links to or makes the account of the address it folds into.
 */
function addressOf(account: UpstreamAccount): string | null {
  if (account.email === null) return null
  try {
    const email = normalizeEmail(account.email)
    return email === account.email.trim().toLowerCase() ? email : null
  } catch {
    return null
  }
}

/** --allowed-domain: Google's `hd` (the Workspace the account belongs to), otherwise the domain of a verified address. */
export function domainAllowed(p: ProviderRecord, account: UpstreamAccount, email: string | null): boolean {
  if (p.allowedDomains.length === 0) return true
  if (p.kind === 'google') return account.hd !== null && p.allowedDomains.includes(account.hd.toLowerCase())
  return email !== null && account.emailVerified && p.allowedDomains.includes(email.slice(email.lastIndexOf('@') + 1))
}

/**
 * `connecting`: the signed-in user connecting from /account, and their session's id hash (the link
 * holds it). `p` is the provider as the answer was checked against: each write below checks it is
 * still there, at the same origin (ProviderMoved: an operator moved it meanwhile — the sign-in fails
 * and is started again at the provider's new origin).
 */
export async function settle(ctx: AppContext, p: ProviderRecord, account: UpstreamAccount, connecting: { userId: string; session: string } | null): Promise<Settled> {
  try {
    return await settleAt(ctx, p, account, connecting)
  } catch (error) {
    if (error instanceof ProviderMoved) return refused(400, 'provider moved', 'error.providerFailed')
    throw error
  }
}

async function settleAt(ctx: AppContext, p: ProviderRecord, account: UpstreamAccount, connecting: { userId: string; session: string } | null): Promise<Settled> {
  const origin = originOf(p)
  const connectingUserId = connecting?.userId ?? null
  const now = ctx.clock.now()
  const email = addressOf(account)
  const notice = (to: { email: string; locale?: string | null; timeZone?: string | null }) => (ctx.config.smtpUrl === null ? null : newSignInMethodMessage(recipient(ctx.config, to), p.name, email ?? account.subject, `${ctx.config.issuer}/account#connected`))
  if (!domainAllowed(p, account, email)) {
    return refused(403, 'domain', 'error.providerDomain', { name: p.name, domains: p.allowedDomains.join(', ') })
  }
  if (connectingUserId !== null) {
    const user = await ctx.store.users.findUser(connectingUserId)
    const linked = user && (await ctx.store.providers.linkIdentity({ providerId: p.id, subject: account.subject, userId: user.id, email, origin, session: connecting!.session }, now, notice(user) ?? undefined))
    if (linked === 'linked') return { kind: 'connected', userId: connectingUserId }
    if (linked === 'signed-out') return refused(400, 'session', 'error.providerSignedOut')
    const mine = (await ctx.store.providers.listIdentities(connectingUserId)).find((i) => i.providerId === p.id)
    if (mine?.subject === account.subject) return { kind: 'connected', userId: connectingUserId }
    if (mine) return refused(409, 'connected-other', 'error.providerConnectedOther', { name: p.name })
    return refused(409, 'taken', 'error.providerTaken', { name: p.name })
  }
  const known = await ctx.store.providers.useIdentity({ providerId: p.id, subject: account.subject, email, origin }, now)
  if (known) return { kind: 'sign-in', userId: known, how: 'identity' }
  if (p.linkVerifiedEmail && email !== null && account.emailVerified) {
    const linked = await ctx.store.providers.linkByVerifiedEmail({ providerId: p.id, subject: account.subject, email, origin }, now, (to) => notice({ email: to }))
    if (linked) return { kind: 'sign-in', userId: linked, how: 'verified-email' }
  }
  if (p.allowCreate && email !== null) {
    const id = crypto.randomUUID()
    const fullName = nameOf(account, email)
    try {
      await ctx.store.providers.createWithIdentity({ id, email, fullName, avatarUrl: null, emailVerified: account.emailVerified, passwordHash: '' }, { providerId: p.id, subject: account.subject, email, origin }, now)
      return { kind: 'sign-in', userId: id, how: 'created' }
    } catch (error) {
      if (!(error instanceof UniqueViolation)) throw error
      // The same identity made by a sign-in racing this one (another tab, another instance): it signs in.
      const raced = await ctx.store.providers.useIdentity({ providerId: p.id, subject: account.subject, email, origin }, now)
      if (raced) return { kind: 'sign-in', userId: raced, how: 'identity' }
    }
  }
  return refused(403, 'not-linked', 'error.providerNotLinked', { name: p.name })
}

function nameOf(account: UpstreamAccount, email: string): string {
  try {
    return checkFullName(account.name ?? '')
  } catch (error) {
    if (!(error instanceof UserInputError)) throw error
    return email.slice(0, email.indexOf('@')).slice(0, 200)
  }
}
