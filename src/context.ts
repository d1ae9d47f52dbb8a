import type { Config } from './config'
import type { Db } from './db/client'
import type { Writer } from './db/writer'
import type { ExternalWrites } from './db/external-writes'
import type { SettingsCache } from './settings/cache'
import type { Clock } from './lib/clock'
import type { Logger } from './lib/log'
import type { AccessTokens } from './oauth/tokens'

/** What every feature of the app is built from; made once by `createApp`. */
export interface AppContext {
  db: Db
  writer: Writer
  config: Config
  clock: Clock
  log: Logger
  tokens: AccessTokens
  external: ExternalWrites
  settingsCache: SettingsCache
  /** The server's key for CSRF tokens (shared by every instance through the database). */
  csrfKey: string
}
