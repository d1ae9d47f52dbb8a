/** Mail: the outbox, and the links (tokens) that messages carry. */

export interface NewMail {
  to: string
  subject: string
  text: string
  html: string
}

export interface OutboxMessage extends NewMail {
  id: number
  createdAt: number
  attempts: number
}

/** `change`: a new address's confirmation (SPEC "Change email"), used only by a POST from the account's own session. */
export type EmailPurpose = 'verify' | 'reset' | 'invite' | 'change'

export interface EmailToken {
  tokenHash: string
  userId: string
  purpose: EmailPurpose
  /** The address the link was sent to (for a `change` link: the new one). */
  email: string
  expiresAt: number
}

/** What using a link changes, decided by the feature on the token and its user's current email. */
export interface TokenUse {
  passwordHash?: string
  /** Set the account's email to the token's (an email change: every other link of the user goes too), or only mark it verified. */
  email?: string
  emailVerified?: boolean
  endSessions?: boolean
  /**
   * Account recovery (SPEC "Recovery"): every passkey, TOTP secret, recovery code, consent, code,
   * refresh-token family with its tokens, session and other link of the user goes, with the change.
   */
  recover?: boolean
  mail?: NewMail[]
}

/** The link's user as the use of a link finds it, inside its transaction. */
export interface TokenUser {
  email: string
  emailVerified: boolean
  /** The names of the user's passkeys, and whether TOTP is on (a reset's notice lists them). */
  passkeys: string[]
  totp: boolean
}

/** What a recovery removed, for the page that lists it. */
export interface RecoveryRemoved {
  passkeys: string[]
  totp: boolean
  recoveryCodes: number
  /** The names of the apps whose consents or tokens went. */
  apps: string[]
  sessions: number
  /** Provider accounts connected to it (their provider's name and last address): each signed in to it. */
  identities: Array<{ provider: string; email: string | null }>
}

export type TokenOutcome = { ok: true; token: EmailToken; removed?: RecoveryRemoved } | { ok: false; reason: 'unknown' | 'taken' }

export interface MailStore {
  /** Queues messages (their own transaction: for notices that follow a change). */
  enqueue(mail: readonly NewMail[], now: number): Promise<void>
  /**
   * A link and the message that carries it, in one transaction; the user's earlier links of the
   * same purpose stop working.
   */
  issueToken(token: EmailToken, mail: NewMail | null, now: number): Promise<void>
  /** The link's token when it is unused, unexpired and of one of `purposes` (to show a form). */
  findToken(tokenHash: string, purposes: readonly EmailPurpose[], now: number): Promise<EmailToken | undefined>
  /**
   * Uses a link once: in one transaction it is deleted and `use` applied (password, email,
   * verified flag, sessions ended, a recovery, messages queued). `taken`: the email it would set belongs to
   * another account (nothing changes, the link stays).
   */
  useToken(tokenHash: string, purposes: readonly EmailPurpose[], now: number, use: (token: EmailToken, user: TokenUser) => TokenUse): Promise<TokenOutcome>

  /** Leases up to `limit` due messages to this sender until `leaseUntil`. */
  claim(now: number, leaseUntil: number, limit: number): Promise<OutboxMessage[]>
  markSent(id: number, now: number): Promise<void>
  /** Another attempt at `nextAttemptAt`; the lease ends. */
  retryLater(id: number, nextAttemptAt: number, error: string): Promise<void>
  markFailed(id: number, now: number, error: string): Promise<void>
  /** Counts, for tests and operators: messages waiting, sent, failed. */
  outboxCounts(): Promise<{ waiting: number; sent: number; failed: number }>
}
