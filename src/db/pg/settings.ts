import { DatabaseUnavailable, etagList } from '../store'
import type { DeleteOutcome, Preconditions, RemoteSettingChange, SaveOutcome, SaveRules, SettingChange, SettingRefusal, SettingsDelta, SettingsStore, StoredSetting } from '../store'
import { SETTINGS_CHANNEL, type PgChangeFeed } from './change-feed'
import { lock, n, type PgContext, type Row, type Tx } from './context'

const toSetting = (r: Row): StoredSetting => ({ key: r.key as string, value: r.value as string, updatedAt: n(r.updated_at) })

/** A bury-only revision for deleteAppSettings: `latchkey_next_setting_revision` (migration 0014) takes the next one, lays the tombstone and NOTIFYs at commit. */
function buryWithRevision(tx: Tx, userId: string, clientId: string, key: string, now: number): Promise<number> {
  return tx`SELECT latchkey_next_setting_revision(${userId}, ${clientId}, ${key}, ${now}, 'bury', ${SETTINGS_CHANNEL}) AS revision`.then((rows: Row[]) => n(rows[0]!.revision))
}

/** If-Match / If-None-Match as the SQL functions take them: `*`, or `etagList`'s tags joined with `,`. */
function tags(header: string | undefined): string | null {
  if (header === undefined) return null
  const list = etagList(header)
  return list === '*' ? '*' : list.join(',')
}

interface SaveOp {
  op: 'save'
  client: string
  key: string
  value: string
  now: number
  bytes: number
  max_keys: number
  max_bytes: number
  if_match: string | null
  if_none_match: string | null
}
interface DeleteOp {
  op: 'delete'
  client: string
  key: string
  now: number
  if_match: string | null
  if_none_match: string | null
}
type WriteOp = SaveOp | DeleteOp
interface WriteRow {
  refused: string | null
  revision: unknown
  updated_at: unknown
}
interface Write {
  userId: string
  op: WriteOp
}
interface Queued extends Write {
  resolve(row: WriteRow): void
  reject(error: unknown): void
}

/** At most this many writes, or about this many bytes of values, go in one transaction. */
export const MAX_WRITES_TOGETHER = 64
const MAX_BYTES_TOGETHER = 1024 * 1024

/**
 * Settings writes, grouped. A user's writes queue on their lock anyway (every instance's), each
 * waiting for the commit — a WAL flush — before it; and every write statement costs the instance a
 * round trip's work. So at most `slots` write statements are in flight from this instance (half
 * the pool: reads keep the rest); a write that finds one free goes at once, alone, and the writes
 * that arrive meanwhile wait here and go together, in one call of `latchkey_write_settings`
 * (migration 0015) and one commit, each decided as it would be alone.
 *
 * - One user's writes keep their order: while one of a user's writes is in flight, the user's next
 *   ones wait for it (and then go together).
 * - A batch takes the users' locks in one order (by user id), as every batch on every instance
 *   does, so two batches never wait for each other in a cycle.
 * - A batch that fails on anything but an unreachable database (a deadlock is retried whole, as
 *   every atomic statement is) is tried again one write at a time: one write's fault is its own.
 * - Bounded: what waits here are requests waiting for their answer; a batch is at most
 *   MAX_WRITES_TOGETHER writes (~1 MiB of values). Inside a store transaction, each write is its
 *   own statement of it.
 */
class SettingsWrites {
  /** A user is here while a write of theirs is in flight or ready: the writes that wait for it. */
  private readonly users = new Map<string, Queued[]>()
  /** Writes whose user has nothing in flight, in groups of one user's, waiting for a free slot. */
  private readonly ready: Queued[][] = []
  private inFlight = 0

  constructor(
    private readonly ctx: PgContext,
    private readonly slots: () => number,
  ) {}

  write(userId: string, op: WriteOp): Promise<WriteRow> {
    if (this.ctx.inTransaction) return this.send([{ userId, op }]).then((rows) => rows[0]!)
    return new Promise((resolve, reject) => {
      const queued = { userId, op, resolve, reject }
      const waiting = this.users.get(userId)
      if (waiting) return void waiting.push(queued)
      this.users.set(userId, [])
      this.ready.push([queued])
      this.pump()
    })
  }

  /** Sends ready writes while a slot is free: one batch of whole groups each time. */
  private pump(): void {
    while (this.inFlight < this.slots() && this.ready.length > 0) {
      const batch: Queued[] = []
      let bytes = 0
      while (this.ready.length > 0 && batch.length + this.ready[0]!.length <= MAX_WRITES_TOGETHER && (batch.length === 0 || bytes < MAX_BYTES_TOGETHER)) {
        for (const q of this.ready.shift()!) {
          batch.push(q)
          bytes += q.op.op === 'save' ? q.op.value.length : 0
        }
      }
      this.inFlight++
      void this.flush(batch).then(() => {
        this.inFlight--
        this.release(batch)
        this.pump()
      })
    }
  }

  /** After a batch: each of its users' waiting writes become ready (at most a batch's worth), or the user is done. */
  private release(batch: Queued[]): void {
    for (const userId of new Set(batch.map((q) => q.userId))) {
      const waiting = this.users.get(userId)!
      if (waiting.length === 0) this.users.delete(userId)
      else this.ready.push(waiting.splice(0, MAX_WRITES_TOGETHER))
    }
  }

  private flush(batch: Queued[]): Promise<void> {
    // By user id (stable: one user's writes keep their order): the order every batch locks in.
    const sorted = batch.length > 1 ? [...batch].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0)) : batch
    return this.send(sorted).then(
      (rows) => sorted.forEach((q, i) => q.resolve(rows[i]!)),
      async (error) => {
        if (sorted.length === 1 || error instanceof DatabaseUnavailable) return sorted.forEach((q) => q.reject(error))
        for (const q of sorted) await this.send([q]).then((rows) => q.resolve(rows[0]!), q.reject)
      },
    )
  }

  /** A write alone calls its own function (migration 0014); several go through latchkey_write_settings. */
  private send(writes: Write[]): Promise<WriteRow[]> {
    const { userId, op } = writes[0]!
    if (writes.length > 1) {
      const ops = writes.map((q) => ({ user: q.userId, ...q.op }))
      return this.ctx.atomic((sql) => sql`SELECT refused, revision, updated_at FROM latchkey_write_settings(${JSON.stringify(ops)}::text::jsonb, ${SETTINGS_CHANNEL})`)
    }
    if (op.op === 'delete')
      return this.ctx.atomic((sql) => sql`SELECT refused, revision, NULL AS updated_at FROM latchkey_delete_setting(${userId}, ${op.client}, ${op.key}, ${op.now}, ${op.if_match}, ${op.if_none_match}, ${SETTINGS_CHANNEL})`)
    return this.ctx.atomic(
      (sql) => sql`SELECT refused, revision, updated_at FROM latchkey_save_setting(${userId}, ${op.client}, ${op.key}, ${op.value}, ${op.now}, ${op.bytes},
        ${op.max_keys}, ${op.max_bytes}, ${op.if_match}, ${op.if_none_match}, ${SETTINGS_CHANNEL})`,
    )
  }
}

export class PgSettings implements SettingsStore {
  private readonly writes: SettingsWrites

  /** `writeSlots`: how many write statements may be in flight at once (see SettingsWrites). */
  constructor(
    private readonly ctx: PgContext,
    private readonly feed: () => PgChangeFeed,
    writeSlots: () => number,
  ) {
    this.writes = new SettingsWrites(ctx, writeSlots)
  }

  /** One statement, one snapshot: the rows and the revision they are at. */
  listSettings(userId: string, clientId: string): Promise<{ settings: StoredSetting[]; revision: number }> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`SELECT h.revision, s.key, s.value, s.updated_at
        FROM (SELECT coalesce((SELECT revision FROM setting_heads WHERE user_id = ${userId} AND client_id = ${clientId}), 0) AS revision) h
        LEFT JOIN settings s ON s.user_id = ${userId} AND s.client_id = ${clientId} ORDER BY s.key`
      return { settings: rows.filter((r: Row) => r.key !== null).map(toSetting), revision: n(rows[0]!.revision) }
    })
  }

  getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT key, value, updated_at FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} AND key = ${key}`
      return row && toSetting(row)
    })
  }

  /**
   * One round trip: `latchkey_save_setting` (migration 0014) locks the user's settings (every
   * instance queues there; quotas span the user's applications), decides `judgeSave`'s rules on
   * what committed before, writes with the next revision and NOTIFYs at commit. Writes that arrive
   * while the instance's write slots are taken go together next (see SettingsWrites).
   */
  saveSetting(userId: string, clientId: string, key: string, value: string, rules: SaveRules): Promise<SaveOutcome> {
    const op: SaveOp = {
      op: 'save', client: clientId, key, value, now: rules.now, bytes: rules.valueBytes, max_keys: rules.maxKeys, max_bytes: rules.maxUserBytes,
      if_match: tags(rules.ifMatch), if_none_match: tags(rules.ifNoneMatch),
    }
    return this.writes.write(userId, op).then((row): SaveOutcome => {
      if (row.refused !== null) return { ok: false, refused: row.refused as SettingRefusal }
      return { ok: true, setting: { key, value, updatedAt: n(row.updated_at) }, revision: n(row.revision) }
    })
  }

  /** One round trip: `latchkey_delete_setting` (migration 0014), under the same lock; together as saves are. */
  deleteSetting(userId: string, clientId: string, key: string, now: number, pre: Preconditions): Promise<DeleteOutcome> {
    const op: DeleteOp = { op: 'delete', client: clientId, key, now, if_match: tags(pre.ifMatch), if_none_match: tags(pre.ifNoneMatch) }
    return this.writes.write(userId, op).then((row): DeleteOutcome => {
      if (row.refused !== null) return { ok: false, refused: row.refused as 'if-match' | 'if-none-match' | 'missing' }
      return { ok: true, revision: n(row.revision) }
    })
  }

  deleteAppSettings(userId: string, clientId: string, now: number): Promise<SettingChange[]> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, `settings:${userId}`)
      const keys = (await tx`DELETE FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} RETURNING key`).map((r: Row) => r.key as string).sort()
      const out: SettingChange[] = []
      for (const key of keys) out.push({ key, revision: await buryWithRevision(tx, userId, clientId, key, now), setting: undefined })
      return out
    })
  }

  /** One statement, one snapshot: the head, and each key changed after `since` at its latest change with its state now. */
  changesSince(userId: string, clientId: string, since: number): Promise<SettingsDelta> {
    return this.ctx.run(async (sql) => {
      // Each key once, at its latest change: a live key with its value, a deleted one by its tombstone.
      const rows = await sql`SELECT h.revision AS head, h.purged_through, c.key, c.revision, c.value, c.updated_at
        FROM (SELECT coalesce(max(revision), 0) AS revision, coalesce(max(purged_through), 0) AS purged_through
              FROM setting_heads WHERE user_id = ${userId} AND client_id = ${clientId}) h
        LEFT JOIN (SELECT key, revision, value, updated_at FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} AND revision > ${since}
              UNION ALL SELECT key, revision, NULL, NULL FROM setting_tombstones WHERE user_id = ${userId} AND client_id = ${clientId} AND revision > ${since}) c ON true
        ORDER BY c.revision`
      const changes = rows
        .filter((r: Row) => r.key !== null)
        .map((r: Row) => ({ key: r.key as string, revision: n(r.revision), setting: r.value === null ? undefined : toSetting(r) }))
      return { revision: n(rows[0]!.head), purgedThrough: n(rows[0]!.purged_through), changes }
    })
  }

  footprint(of: { userId: string } | { clientId: string }): Promise<{ settings: number; others: number }> {
    return this.ctx.run(async (sql) => {
      const [row] =
        'userId' in of
          ? await sql`SELECT (SELECT coalesce(sum(n), 0) FROM setting_counts WHERE user_id = ${of.userId}) AS settings,
              (SELECT count(*) FROM (SELECT client_id FROM consents WHERE user_id = ${of.userId} UNION SELECT client_id FROM setting_counts WHERE user_id = ${of.userId} AND n > 0) x) AS others`
          : await sql`SELECT (SELECT coalesce(sum(n), 0) FROM setting_counts WHERE client_id = ${of.clientId}) AS settings,
              (SELECT count(*) FROM (SELECT user_id FROM consents WHERE client_id = ${of.clientId} UNION SELECT user_id FROM setting_counts WHERE client_id = ${of.clientId} AND n > 0) x) AS others`
      return { settings: Number(row!.settings), others: Number(row!.others) }
    })
  }

  exportSettings(userId: string): Promise<Array<{ clientId: string; settings: StoredSetting[] }>> {
    return this.ctx.run(async (sql) => {
      const apps = new Map<string, StoredSetting[]>()
      for (const r of await sql`SELECT client_id, key, value, updated_at FROM settings WHERE user_id = ${userId} ORDER BY client_id, key`) {
        const list = apps.get(r.client_id as string)
        if (list) list.push(toSetting(r))
        else apps.set(r.client_id as string, [toSetting(r)])
      }
      return [...apps].map(([clientId, settings]) => ({ clientId, settings }))
    })
  }

  onRemoteChange(listener: (change: RemoteSettingChange | undefined) => void): { alive(): boolean; close(): Promise<void> } {
    const feed = this.feed()
    const subscription = feed.listenSettings(listener, () => listener(undefined))
    return {
      alive: () => feed.alive,
      close: async () => void (await (await subscription).unlisten()),
    }
  }
}
