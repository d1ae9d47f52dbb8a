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

export interface SettingsStore {
  listSettings(userId: string, clientId: string): Promise<StoredSetting[]>
  getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined>
  /**
   * Upserts one setting. `decide` sees the stored version and the user's usage and returns the
   * new `updated_at` (or throws, and nothing is written). Two writers for one user never
   * interleave: quotas and If-Match hold under concurrency.
   */
  saveSetting(
    userId: string,
    clientId: string,
    key: string,
    value: string,
    decide: (current: StoredSetting | undefined, usage: SettingsUsage) => number,
  ): Promise<StoredSetting>
  /** Deletes one setting after `check` (preconditions) accepted the stored version; false if there was none. */
  deleteSetting(userId: string, clientId: string, key: string, check: (current: StoredSetting | undefined) => void): Promise<boolean>
}
