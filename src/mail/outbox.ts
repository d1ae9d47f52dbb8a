import type { NewMail, OutboxMessage, Store } from '../db/store'
import type { Clock } from '../lib/clock'
import type { Logger } from '../lib/log'

/** Sent and failed messages are deleted a week later (SPEC). */
export const MAIL_KEPT_MS = 7 * 24 * 3600 * 1000
/** A claimed message is this sender's until then: longer than any one attempt can take. */
export const LEASE_MS = 2 * 60 * 1000
export const GIVE_UP_AFTER_MS = 24 * 3600 * 1000
const FIRST_RETRY_MS = 30 * 1000
const MAX_RETRY_MS = 10 * 60 * 1000
const BATCH = 10
// Each attempt ends within these, so a dead or slow server only delays the outbox.
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 }

/** After `failures` failed attempts: 30 s, 60 s, 120 s … at most 10 minutes. */
export function retryDelay(failures: number): number {
  return backoff(failures, FIRST_RETRY_MS)
}

/** The same doubling from another first delay (back-channel logouts: BACKCHANNEL_LOGOUT_RETRY), capped at 10 minutes. */
export function backoff(failures: number, firstMs: number): number {
  return Math.min(firstMs * 2 ** Math.max(0, failures - 1), MAX_RETRY_MS)
}

/** What the outbox sends through: SMTP in production. */
export interface MailTransport {
  send(mail: NewMail & { from: string }): Promise<void>
}

/**
 * SMTP from SMTP_URL: `smtp://` upgrades with STARTTLS when the server offers it, `smtps://` is TLS
 * from the first byte; certificates are verified (`ca` adds one, for tests with a self-signed server).
 */
export function smtpTransport(url: string, opts: { ca?: string } = {}): MailTransport {
  const u = new URL(url)
  const secure = u.protocol === 'smtps:'
  const auth = u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined
  // nodemailer is loaded with the first message, not at start (~15 MB a server without mail never needs).
  let transport: Promise<ReturnType<typeof import('nodemailer').createTransport>> | undefined
  const connect = async () => {
    const { createTransport } = await import('nodemailer')
    return createTransport({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || (secure ? 465 : 587), secure, auth, ...TIMEOUTS, tls: opts.ca ? { ca: opts.ca } : undefined })
  }
  return {
    async send(mail) {
      await (await (transport ??= connect())).sendMail({ from: mail.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html })
    },
  }
}

/**
 * The sender: claims due messages with a lease (one sender at a time holds each, on any
 * instance), sends them, and stamps each sent — or moves it back by the retry delay, or after
 * 24 hours gives it up with a `warn` event. A crash between sending and stamping sends that one
 * message again once its lease runs out: at least once, never lost.
 */
export class Outbox {
  private timer: ReturnType<typeof setInterval> | undefined
  private running: Promise<number> | undefined

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly transport: MailTransport,
    private readonly from: string,
    /** Words never to write in a log line (the SMTP password). */
    private readonly secrets: readonly string[] = [],
  ) {}

  /** One round: every due message of a batch, attempted once. Returns how many were attempted. */
  tick(): Promise<number> {
    this.running ??= this.round().finally(() => (this.running = undefined))
    return this.running
  }

  start(everyMs = 1000): void {
    this.timer = setInterval(() => void this.tick().catch((error) => this.log.warn('outbox round failed', { error: this.clean(error) })), everyMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.running?.catch(() => 0)
  }

  private async round(): Promise<number> {
    const now = this.clock.now()
    const messages = await this.store.mail.claim(now, now + LEASE_MS, BATCH)
    await Promise.all(messages.map((m) => this.attempt(m)))
    return messages.length
  }

  private async attempt(m: OutboxMessage): Promise<void> {
    try {
      await this.transport.send({ ...m, from: this.from })
    } catch (error) {
      const now = this.clock.now()
      const failures = m.attempts + 1
      const reason = this.clean(error)
      if (now + retryDelay(failures) - m.createdAt > GIVE_UP_AFTER_MS) {
        await this.store.mail.markFailed(m.id, now, reason)
        this.log.warn('mail given up', { message: m.id, subject: m.subject, attempts: failures, error: reason })
      } else {
        await this.store.mail.retryLater(m.id, now + retryDelay(failures), reason)
        this.log.info('mail delayed', { message: m.id, attempts: failures, error: reason })
      }
      return
    }
    await this.store.mail.markSent(m.id, this.clock.now())
  }

  private clean(error: unknown): string {
    let text = String((error as Error)?.message ?? error).slice(0, 500)
    for (const secret of this.secrets) if (secret.length >= 3) text = text.replaceAll(secret, '***')
    return text
  }
}
