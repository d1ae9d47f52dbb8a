import type { Config } from './config'
import type { Store } from './db/store'
import type { SettingsCache } from './settings/cache'
import type { Clock } from './lib/clock'
import type { Logger } from './lib/log'
import type { SealKey } from './lib/seal'
import type { AccessTokens } from './oauth/tokens'
import type { RefreshTokens } from './oauth/refresh-tokens'
import type { SigningKeys } from './oidc/keys'
import type { ResourceDirectory } from './oauth/resources'
import type { MetadataClients } from './oauth/client-metadata'
import type { SettingsHub } from './settings/hub'
import type { Metrics } from './metrics'
import type { AuditLog } from './audit'

/** What every feature of the app is built from; made once by `createContext`. */
export interface AppContext {
  store: Store
  config: Config
  clock: Clock
  log: Logger
  tokens: AccessTokens
  refreshTokens: RefreshTokens
  signingKeys: SigningKeys
  /** Registered resources (RFC 8707), cached. */
  resources: ResourceDirectory
  /** Clients met through their metadata documents, fetched and cached. */
  metadataClients: MetadataClients
  settingsCache: SettingsCache
  /** The open settings streams of this instance. */
  settingsHub: SettingsHub
  /** Counters and histograms for GET /metrics (served only on METRICS_ADDRESS). */
  metrics: Metrics
  /** The audit log (batched writes). */
  audit: AuditLog
  /** The server's key for CSRF tokens (shared by every instance through the database). */
  csrfKey: string
  /** The server's key for secrets it must read back (TOTP seeds), shared the same way. */
  sealKey: SealKey
}
