import type { AppContext } from '../context'
import type { SettingChange } from '../db/store'
import { changeEvent } from './sync'

/** What one open stream needs: who it is for, how far it got, and its token (to end with it). */
export interface Stream {
  userId: string
  clientId: string
  tokenId: number
  expiresAt: number
  /** The last revision sent (or replayed). */
  last: number
  /** Queues an event; false when the reader is too far behind (the stream then ends). */
  send(text: string): boolean
  end(reason: string): void
}

interface Group {
  streams: Set<Stream>
  /** Catch-ups from the store run one after another, in revision order. */
  chain: Promise<void>
  /** Catch-ups queued or running: meanwhile a local change waits its turn behind them. */
  pending: number
}

/** How often open streams are checked for an expired token (SPEC: within a second) and, on SQLite, other processes' writes. */
const SWEEP_MS = 500
/** A comment keeps proxies from timing an idle stream out (SPEC: every 15 s). */
export const HEARTBEAT_MS = 15_000
export const STREAMS_PER_USER = 20

/**
 * The open settings streams of this instance, by (user, app). A change this instance committed
 * goes straight to the streams that are up to date; one that another instance committed
 * (PostgreSQL's NOTIFY, sent at commit) or that a stream has not seen yet is read from the store
 * once for the group (one query, however many streams). A stream ends within a second of its
 * token expiring or being revoked anywhere: revocations name their tokens (or, when they may be
 * any — an app revoked, a user deleted — the open streams' tokens are looked up together).
 */
export class SettingsHub {
  private readonly groups = new Map<string, Group>()
  private readonly perUser = new Map<string, number>()
  private open = 0
  private closing = false
  private remote: { alive(): boolean; close(): Promise<void> } | undefined
  private sweep: ReturnType<typeof setInterval> | undefined
  private heartbeat: ReturnType<typeof setInterval> | undefined
  private tokenCheck: Promise<void> | undefined
  private tokenCheckAgain = false
  private remoteWasAlive = true

  constructor(private readonly ctx: Pick<AppContext, 'store' | 'clock' | 'tokens' | 'config' | 'log'>) {}

  /** Listens and ticks only once a stream opens: most processes (the CLI, most tests) never need to. */
  private start(): void {
    if (this.remote) return
    this.remote = this.ctx.store.settings.onRemoteChange((change) => (change ? this.changed(change.userId, change.clientId, change.revision) : this.catchUpAll()))
    this.ctx.tokens.onRevoked((ids) => (ids ? this.endTokens(ids) : this.checkTokens()))
    this.sweep = setInterval(() => this.tick(), SWEEP_MS)
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS)
    this.sweep.unref?.()
    this.heartbeat.unref?.()
  }

  get count(): number {
    return this.open
  }

  /**
   * Takes a slot for a new stream of this user, or says why it cannot open now. Checked and taken
   * in one synchronous step: a check whose slot were taken only after the opening's awaits (the
   * store's lookups) would let every stream opening meanwhile through (seen: 44 of 100 for a
   * limit of 20 on PostgreSQL). The slot is the stream's once `add`ed; `release` it if not.
   */
  reserve(userId: string): 'user' | 'instance' | 'closing' | undefined {
    if (this.closing) return 'closing'
    if (this.open >= this.ctx.config.settingsStreamsMax) return 'instance'
    const mine = this.perUser.get(userId) ?? 0
    if (mine >= STREAMS_PER_USER) return 'user'
    this.perUser.set(userId, mine + 1)
    this.open++
    return undefined
  }

  /** Gives back a slot `reserve` took for a stream that did not open. */
  release(userId: string): void {
    const n = (this.perUser.get(userId) ?? 1) - 1
    if (n === 0) this.perUser.delete(userId)
    else this.perUser.set(userId, n)
    this.open--
  }

  /** Opens a stream in the slot `reserve` took, at `stream.last`: what it has not seen (a replay, or what committed while it opened) follows from the store. */
  add(stream: Stream): void {
    if (this.closing) {
      // The server began stopping while this stream opened: closeAll did not see it.
      this.release(stream.userId)
      return stream.end('shutdown')
    }
    this.start()
    const id = `${stream.userId} ${stream.clientId}`
    let group = this.groups.get(id)
    if (!group) this.groups.set(id, (group = { streams: new Set(), chain: Promise.resolve(), pending: 0 }))
    group.streams.add(stream)
    this.catchUp(id, group)
  }

  remove(stream: Stream): void {
    const id = `${stream.userId} ${stream.clientId}`
    const group = this.groups.get(id)
    if (!group?.streams.delete(stream)) return
    if (group.streams.size === 0 && group.pending === 0) this.groups.delete(id)
    this.release(stream.userId)
  }

  /** A change this instance committed (durable: the store has returned). */
  published(userId: string, clientId: string, change: SettingChange): void {
    const group = this.groups.get(`${userId} ${clientId}`)
    if (!group) return
    if (group.pending > 0) return this.catchUp(`${userId} ${clientId}`, group)
    let behind = false
    for (const stream of group.streams) {
      if (stream.last >= change.revision) continue
      if (stream.last === change.revision - 1) this.deliver(stream, changeEvent(change, clientId), change.revision)
      else behind = true
    }
    if (behind) this.catchUp(`${userId} ${clientId}`, group)
  }

  /** A revision committed somewhere (this instance's own come back too, and find everyone up to date). */
  changed(userId: string, clientId: string, revision: number): void {
    const id = `${userId} ${clientId}`
    const group = this.groups.get(id)
    if (group && [...group.streams].some((s) => s.last < revision)) this.catchUp(id, group)
  }

  /** Resolves once every catch-up queued so far (and any queued meanwhile) has run: what a change committed before the call has reached its streams. */
  async settled(): Promise<void> {
    for (;;) {
      const busy = [...this.groups.values()].filter((g) => g.pending > 0)
      if (busy.length === 0) return
      await Promise.all(busy.map((g) => g.chain))
    }
  }

  /** Ends every stream: the server is stopping. */
  closeAll(): void {
    this.closing = true
    clearInterval(this.sweep)
    clearInterval(this.heartbeat)
    for (const group of this.groups.values()) for (const stream of group.streams) stream.end('shutdown')
    void this.remote?.close().catch(() => {})
  }

  private deliver(stream: Stream, text: string, revision: number): void {
    if (stream.send(text)) stream.last = revision
    else stream.end('backlog')
  }

  /** Reads what the group's streams have not seen, once, and sends each stream its part. */
  private catchUp(id: string, group: Group): void {
    group.pending++
    group.chain = group.chain.then(async () => {
      const streams = [...group.streams]
      const [userId, clientId] = id.split(' ') as [string, string]
      try {
        if (streams.length === 0) return
        const since = Math.min(...streams.map((s) => s.last))
        const delta = await this.ctx.store.settings.changesSince(userId, clientId, since)
        for (const stream of streams) {
          if (!group.streams.has(stream)) continue
          if (stream.last < delta.purgedThrough) {
            stream.end('gone')
            continue
          }
          for (const change of delta.changes) if (change.revision > stream.last) this.deliver(stream, changeEvent(change, clientId), change.revision)
          if (group.streams.has(stream) && stream.last < delta.revision) stream.last = delta.revision
        }
      } catch (error) {
        this.ctx.log.warn('settings stream catch-up failed', { error: (error as Error).message })
      } finally {
        group.pending--
        if (group.streams.size === 0 && group.pending === 0 && this.groups.get(id) === group) this.groups.delete(id)
      }
    })
  }

  private catchUpAll(): void {
    for (const [id, group] of this.groups) this.catchUp(id, group)
  }

  private endTokens(ids: readonly number[]): void {
    const gone = new Set(ids)
    for (const group of this.groups.values()) for (const stream of group.streams) if (gone.has(stream.tokenId)) stream.end('revoked')
  }

  /** After a revocation that named no tokens: which open streams' tokens still exist, in one lookup (coalesced). */
  private checkTokens(): void {
    if (this.open === 0) return
    if (this.tokenCheck) {
      this.tokenCheckAgain = true
      return
    }
    this.tokenCheck = (async () => {
      do {
        this.tokenCheckAgain = false
        const streams = [...this.groups.values()].flatMap((g) => [...g.streams])
        const alive = await this.ctx.store.tokens.existingTokens([...new Set(streams.map((s) => s.tokenId))])
        for (const stream of streams) if (!alive.has(stream.tokenId)) stream.end('revoked')
      } while (this.tokenCheckAgain)
    })()
      .catch((error) => this.ctx.log.warn('settings stream token check failed', { error: (error as Error).message }))
      .finally(() => (this.tokenCheck = undefined))
  }

  /**
   * Expired tokens end their streams; another process's commits (SQLite: the CLI deleting a user)
   * are noticed; while PostgreSQL's feed is down nothing it would say can be trusted, so tokens
   * are checked and groups caught up from the store on every sweep until it is back.
   */
  private tick(): void {
    if (this.open === 0) return
    this.ctx.store.changes.check()
    const now = this.ctx.clock.now()
    for (const group of this.groups.values()) for (const stream of group.streams) if (stream.expiresAt <= now) stream.end('expired')
    const alive = this.remote!.alive() && this.ctx.store.changes.check()
    if (!alive) {
      this.checkTokens()
      this.catchUpAll()
    } else if (!this.remoteWasAlive) this.catchUpAll()
    this.remoteWasAlive = alive
  }

  private beat(): void {
    for (const group of this.groups.values()) for (const stream of group.streams) if (!stream.send(': keep-alive\n\n')) stream.end('backlog')
  }
}
