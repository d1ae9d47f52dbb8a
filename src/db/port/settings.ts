export interface StoredSetting {
  key: string
  /** Serialized JSON exactly as stored. */
  value: string
  updatedAt: number
}

/** A user's settings footprint: keys in one application, value bytes in all of them. */
export interface SettingsUsage {
  keys: number
  bytes: number
}

/** One change of settings sync: a key at a revision, and its state after it (none: deleted). */
export interface SettingChange {
  revision: number
  key: string
  setting: StoredSetting | undefined
}

export interface RemoteSettingChange {
  userId: string
  clientId: string
  revision: number
}

/** What changed after a revision: each key once, at its latest state, in revision order. */
export interface SettingsDelta {
  /** The (user, app)'s current revision (0: never changed). */
  revision: number
  /** Changes through this revision were purged: an older `since` cannot be answered. */
  purgedThrough: number
  changes: SettingChange[]
}

export interface SettingsStore {
  /** The settings, sorted by key, and the revision they are at (read together). */
  listSettings(userId: string, clientId: string): Promise<{ settings: StoredSetting[]; revision: number }>
  getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined>
  /**
   * Upserts one setting. `decide` sees the stored version and the user's usage and returns the
   * new `updated_at` (or throws, and nothing is written). Two writers for one user never
   * interleave: quotas and If-Match hold under concurrency, and the (user, app)'s next revision
   * is taken in the same transaction (gap-free; other instances hear of it once it is durable).
   */
  saveSetting(
    userId: string,
    clientId: string,
    key: string,
    value: string,
    decide: (current: StoredSetting | undefined, usage: SettingsUsage) => number,
  ): Promise<StoredSetting & { revision: number }>
  /** Deletes one setting after `check` (preconditions) accepted the stored version: its revision, or false if there was none. */
  deleteSetting(userId: string, clientId: string, key: string, now: number, check: (current: StoredSetting | undefined) => void): Promise<number | false>
  /** Deletes all of a user's settings for an app: one revision per key, returned in order. */
  deleteAppSettings(userId: string, clientId: string, now: number): Promise<SettingChange[]>
  /** What changed after `since`, read in one snapshot with the current revision. */
  changesSince(userId: string, clientId: string, since: number): Promise<SettingsDelta>
  /** Every setting of the user, per app (the account's data download). */
  exportSettings(userId: string): Promise<Array<{ clientId: string; settings: StoredSetting[] }>>
  /**
   * Other instances' changes (PostgreSQL: NOTIFY at commit); SQLite has one writing process and
   * never calls. `undefined`: the feed was down and is back — anything may have been missed.
   * `alive` says whether the feed can be trusted now.
   */
  onRemoteChange(listener: (change: RemoteSettingChange | undefined) => void): { alive(): boolean; close(): Promise<void> }
}
