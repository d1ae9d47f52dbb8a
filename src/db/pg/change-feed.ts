import type { SQL } from 'bun'
import { connect } from './connect'
import type { Change, ChangeFeed, RemoteSettingChange } from '../store'

export const CHANNEL = 'latchkey_changes'
/** Settings sync: `<user id> <client id> <revision>`, sent at commit by the writing transaction. */
export const SETTINGS_CHANNEL = 'latchkey_settings'
/** The payload prefix of deleted access tokens named by id (drizzle/pg/0005). */
const TOKENS_NAMED = 'access_tokens:'
/** The payload prefix of users whose row changed, named by id (drizzle/pg/0017). */
const USERS_NAMED = 'users:'

/** The payload prefix of users whose sign-in sessions ended or groups changed (drizzle/pg/0021); `sessions` alone: too many to name. */
const SESSIONS_NAMED = 'sessions:'
/** A site or its rules changed (drizzle/pg/0021). */
const SITES = 'sites'

/**
 * The payload prefix of clients inserted or updated (drizzle/pg/0026): a JSON array of their ids
 * (an id may be a URL, commas and all), or `*`: too many to name.
 */
const CLIENTS_NAMED = 'clients:'

/** Device codes were updated or deleted (drizzle/pg/0027). */
const DEVICES = 'devices'

/** A payload as a change: named tokens, users, sessions or clients, sites, device codes; else a table's name (anything in it may have changed). */
export function parseChange(payload: string): Change | undefined {
  if (payload.startsWith(TOKENS_NAMED)) return { tokens: payload.slice(TOKENS_NAMED.length).split(',').map(Number) }
  if (payload.startsWith(USERS_NAMED)) return { users: payload.slice(USERS_NAMED.length).split(',') }
  if (payload.startsWith(SESSIONS_NAMED)) return { sessions: payload.slice(SESSIONS_NAMED.length).split(',') }
  if (payload === 'sessions') return { sessions: 'all' }
  if (payload === SITES) return { sites: true }
  if (payload === DEVICES) return { devices: true }
  if (payload.startsWith(CLIENTS_NAMED)) return clientsNamed(payload.slice(CLIENTS_NAMED.length))
  return undefined
}

/** The clients a payload names; a list that does not parse as one names nothing (anything may have changed). */
function clientsNamed(list: string): Change | undefined {
  if (list === '*') return { clients: 'all' }
  try {
    const ids: unknown = JSON.parse(list)
    if (Array.isArray(ids) && ids.length > 0 && ids.every((id) => typeof id === 'string')) return { clients: ids as string[] }
  } catch {}
  return undefined
}
/** How often each process proves its LISTEN connection alive. */
const BEAT_MS = 25

/**
 * When a LISTEN connection is trusted: while no more than `allowed` of the beats this process
 * sent are still to come back through it. Counted in beats, not milliseconds: a busy event loop
 * (1,024 connections on two cores) sends its beats late and reads their echoes late alike, where
 * a clock said "90 ms without an echo" and sent every lookup to the database (75–85k of 320k
 * requests in 8 s, at 58 % of the 64-connection rate). A dead connection still goes stale after
 * `allowed + 1` beats: ~100 ms.
 */
export class Heartbeat {
  private sent = 0
  private echoed = 0

  constructor(private readonly allowed = 3) {}

  beat(): void {
    this.sent++
  }

  echo(): void {
    if (this.echoed < this.sent) this.echoed++
  }

  /** A new connection: nothing outstanding on it. */
  reset(): void {
    this.echoed = this.sent
  }

  get alive(): boolean {
    return this.sent - this.echoed <= this.allowed
  }
}

/**
 * One LISTEN connection per process and database (Bun's `sql.listen` reconnects it by itself),
 * shared by every store of the process. Triggers NOTIFY on deletes of tokens (naming up to 100
 * of them, drizzle/pg/0005), users and clients (drizzle/pg/0001), changes of resources (0012),
 * of users' names, emails, flags (naming up to 100 users, 0017), of users' sessions and group
 * memberships (naming users) and of sites (0025), of clients inserted or updated (naming up to
 * 100, 0026) — whoever committed them,
 * this instance included (its store also tells its own caches at once, PgStore.emit). The connection is only
 * trusted while this process's own heartbeats come back through it: a dead or reconnecting
 * listener is noticed within a few beats (Heartbeat), and caches are bypassed until it is back
 * — then emptied, since changes may have been missed meanwhile.
 */
class Listener {
  private readonly feeds = new Set<PgChangeFeed>()
  private readonly id = crypto.randomUUID()
  private listening = false
  private readonly heartbeat = new Heartbeat()
  private beat: ReturnType<typeof setInterval> | undefined
  private subscription: Promise<SQL.ListenSubscription> | undefined

  constructor(private readonly sql: SQL) {}

  get alive(): boolean {
    return this.listening && this.heartbeat.alive
  }

  add(feed: PgChangeFeed): Promise<unknown> {
    this.feeds.add(feed)
    this.subscription ??= this.sql.listen(CHANNEL, (payload) => this.received(payload), () => this.subscribed())
    this.beat ??= setInterval(() => {
      this.heartbeat.beat()
      void this.sql.notify(CHANNEL, `beat:${this.id}`).catch(() => {})
    }, BEAT_MS)
    this.beat.unref?.()
    return this.subscription
  }

  /** Settings changes, on the same connection (and so the same heartbeat) as the cache feed. */
  listenSettings(onPayload: (payload: string) => void, onListen: () => void): Promise<SQL.ListenSubscription> {
    return this.sql.listen(SETTINGS_CHANNEL, onPayload, onListen)
  }

  /** Drops a feed; true when it was the last one and the connection closed. */
  async remove(feed: PgChangeFeed): Promise<boolean> {
    this.feeds.delete(feed)
    if (this.feeds.size > 0) return false
    clearInterval(this.beat)
    this.beat = undefined
    const subscription = this.subscription
    this.subscription = undefined
    this.listening = false
    await subscription?.then((s) => s.unlisten()).catch(() => {})
    await this.sql.close().catch(() => {})
    return true
  }

  private subscribed(): void {
    this.listening = true
    this.heartbeat.reset()
    for (const feed of this.feeds) feed.changed()
  }

  private received(payload: string): void {
    if (payload.startsWith('beat:')) {
      if (payload === `beat:${this.id}`) this.heartbeat.echo()
      return
    }
    const change = parseChange(payload)
    for (const feed of this.feeds) feed.changed(change)
  }
}

const listeners = new Map<string, Listener>()

/** A store's view of the shared listener. */
export class PgChangeFeed implements ChangeFeed {
  private readonly subscribers: Array<(change?: Change) => void> = []
  private readonly listener: Listener
  private wasAlive = false

  constructor(private readonly url: string) {
    let listener = listeners.get(url)
    if (!listener) listeners.set(url, (listener = new Listener(connect(url, { max: 1, connectionTimeout: 2 }))))
    this.listener = listener
  }

  start(): Promise<unknown> {
    return this.listener.add(this)
  }

  onChange(listener: (change?: Change) => void): void {
    this.subscribers.push(listener)
  }

  /** Settings changes other instances committed; `resubscribed` after the connection came back. */
  listenSettings(onChange: (change: RemoteSettingChange) => void, resubscribed: () => void): Promise<SQL.ListenSubscription> {
    let first = true
    return this.listener.listenSettings(
      (payload) => {
        const [userId, clientId, revision] = payload.split(' ')
        if (userId && clientId && revision) onChange({ userId, clientId, revision: Number(revision) })
      },
      () => {
        if (!first) resubscribed()
        first = false
      },
    )
  }

  get alive(): boolean {
    return this.listener.alive
  }

  changed(change?: Change): void {
    for (const subscriber of this.subscribers) subscriber(change)
  }

  check(): boolean {
    const alive = this.listener.alive
    // Back after an outage: whatever was cached before it may have been revoked meanwhile.
    if (alive && !this.wasAlive) this.changed()
    this.wasAlive = alive
    return alive
  }

  async stop(): Promise<void> {
    if ((await this.listener.remove(this)) && listeners.get(this.url) === this.listener) listeners.delete(this.url)
  }
}
