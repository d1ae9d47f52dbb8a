/**
 * OpenID Connect Back-Channel Logout 1.0: when a sign-in session ends, every app that got an
 * id_token in it and registered a `backchannel_logout_uri` is POSTed a logout token.
 *
 * The deliveries are rows written by a trigger in the very transaction that deletes the session
 * (whatever deletes it: sign-out, "sign out everywhere", RP-initiated logout, an admin, disabling,
 * deleting, a password reset …), one per app and session (a unique index). This sender works them
 * off as the mail outbox does — a lease claimed FOR UPDATE SKIP LOCKED, so each is held by one
 * instance; the same back-off (30 s or BACKCHANNEL_LOGOUT_RETRY, doubling to 10 min) for 24 h — so an app that is down or
 * slow never holds up a sign-out, and each is delivered once (at least once across a crash).
 */
import type { AppContext } from '../context'
import type { LogoutDelivery } from '../db/store'
import { randomToken } from '../lib/crypto'
import { FetchRefused, safeFetch, type SafeFetchPolicy } from '../lib/safe-fetch'
import { GIVE_UP_AFTER_MS, LEASE_MS, backoff } from '../mail/outbox'
import { signJwt } from './jwt'

/** §2.6: the event that makes a JWT a logout token. */
export const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
/** A logout token is good for two minutes (SPEC): long enough for a clock a little off. */
const LOGOUT_TOKEN_SECONDS = 120
/** Each attempt ends within this, well inside the lease (a test may shorten it). */
const ATTEMPT_TIMEOUT_MS = 10_000
const BATCH = 20

type Ctx = Pick<AppContext, 'store' | 'clock' | 'log' | 'config' | 'signingKeys'>

/** The logout token (§2.4): signed as the app's id_tokens are, typ logout+jwt, with sub and sid, and no nonce. */
export async function logoutToken(ctx: Ctx, delivery: Pick<LogoutDelivery, 'clientId' | 'userId' | 'sid' | 'idTokenAlg'>): Promise<string> {
  const iat = Math.floor(ctx.clock.now() / 1000)
  const signer = await ctx.signingKeys.signingKey(delivery.idTokenAlg as 'RS256' | 'ES256' | 'EdDSA')
  const payload = {
    iss: ctx.config.issuer,
    aud: delivery.clientId,
    iat,
    exp: iat + LOGOUT_TOKEN_SECONDS,
    jti: randomToken(),
    sub: delivery.userId,
    sid: delivery.sid,
    events: { [LOGOUT_EVENT]: {} },
  }
  return signJwt(payload, signer, 'logout+jwt')
}

export class BackchannelLogout {
  private timer: ReturnType<typeof setInterval> | undefined
  private claiming: Promise<Promise<void>[]> | undefined
  /** Attempts under way: each runs on its own, so an app that holds its POST holds only its own delivery. */
  private readonly inFlight = new Set<Promise<void>>()
  private readonly attemptTimeoutMs: number
  private readonly lookup: SafeFetchPolicy['lookup']

  /** `lookup`: the resolver for dynamically registered apps' hosts (tests give names that resolve to private addresses). */
  constructor(
    private readonly ctx: Ctx,
    opts: { attemptTimeoutMs?: number; lookup?: SafeFetchPolicy['lookup'] } = {},
  ) {
    this.attemptTimeoutMs = opts.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS
    this.lookup = opts.lookup
  }

  /** One round: claims what is due and attempts each once; resolves when those attempts ended, with how many. */
  async tick(): Promise<number> {
    const started = await this.claim()
    await Promise.all(started)
    return started.length
  }

  /** Every `everyMs` a claim of what is due, without waiting for earlier attempts (up to BATCH under way). */
  start(everyMs = 1000): void {
    this.timer = setInterval(() => void this.claim().catch((error) => this.ctx.log.warn('back-channel logout round failed', { error: String((error as Error)?.message ?? error) })), everyMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.claiming?.catch(() => [])
    await Promise.all(this.inFlight)
  }

  /** One claim at a time per sender; the attempts it starts are tracked, not awaited. */
  private claim(): Promise<Promise<void>[]> {
    this.claiming ??= (async () => {
      const room = BATCH - this.inFlight.size
      if (room <= 0) return []
      const now = this.ctx.clock.now()
      const due = await this.ctx.store.sessions.claimLogouts(now, now + LEASE_MS, room)
      return due.map((d) => {
        const attempt: Promise<void> = this.attempt(d)
          .catch((error) => this.ctx.log.warn('back-channel logout attempt failed', { client: d.clientId, error: String((error as Error)?.message ?? error) }))
          .finally(() => this.inFlight.delete(attempt))
        this.inFlight.add(attempt)
        return attempt
      })
    })().finally(() => (this.claiming = undefined))
    return this.claiming
  }

  private async attempt(d: LogoutDelivery): Promise<void> {
    const { store, clock, log } = this.ctx
    // The app removed its URI (or it was never one to trust) since the session ended: nothing to send.
    if (d.uri === null) return store.sessions.logoutFailed(d.id, clock.now(), 'the app has no back-channel logout URI')
    try {
      await this.post(d.uri, d.dynamic, `logout_token=${encodeURIComponent(await logoutToken(this.ctx, d))}`)
    } catch (error) {
      const now = clock.now()
      const failures = d.attempts + 1
      const reason = String((error as Error)?.message ?? error).slice(0, 300)
      const delay = backoff(failures, this.ctx.config.backchannelLogoutRetry * 1000)
      if (now + delay - d.createdAt > GIVE_UP_AFTER_MS) {
        await store.sessions.logoutFailed(d.id, now, reason)
        log.warn('back-channel logout given up', { client: d.clientId, attempts: failures, error: reason })
      } else {
        await store.sessions.logoutRetryLater(d.id, now + delay, reason)
        log.info('back-channel logout delayed', { client: d.clientId, attempts: failures, error: reason })
      }
      return
    }
    await store.sessions.logoutSent(d.id, clock.now())
  }

  /**
   * A dynamically registered app's URI is reached under the metadata fetcher's rules (public
   * addresses only, checked as resolved and as connected; no redirects); an operator's as given.
   */
  private async post(uri: string, dynamic: boolean, body: string): Promise<void> {
    const type = 'application/x-www-form-urlencoded'
    if (dynamic) {
      await safeFetch(new URL(uri), { allowHosts: this.ctx.config.clientIdMetadataAllowHosts, timeoutMs: this.attemptTimeoutMs, maxBytes: 16_384, lookup: this.lookup }, { type, body })
      return
    }
    const res = await fetch(uri, { method: 'POST', body, headers: { 'content-type': type, 'user-agent': 'Latchkey' }, redirect: 'manual', signal: AbortSignal.timeout(this.attemptTimeoutMs) })
    await res.body?.cancel()
    // §2.8: 200 when the logout succeeded (any 2xx is taken); anything else is tried again.
    if (res.status < 200 || res.status > 299) throw new FetchRefused(`answered ${res.status}`)
  }
}
