import type { Config } from './config'
import type { Store } from './db/store'
import { SettingsCache } from './settings/cache'
import { systemClock, type Clock } from './lib/clock'
import { randomToken } from './lib/crypto'
import { silentLogger, type Logger } from './lib/log'
import { sealKeyFrom, type SealKey } from './lib/seal'
import { AccessTokens } from './oauth/tokens'
import { RefreshTokens } from './oauth/refresh-tokens'
import { SigningKeys } from './oidc/keys'
import { ResourceDirectory } from './oauth/resources'
import { MetadataClients } from './oauth/client-metadata'
import { ClientKeys } from './oauth/token/client-keys'
import { SettingsHub } from './settings/hub'
import { Metrics } from './metrics'
import { AuditLog } from './audit'
import { SessionActivity } from './accounts/session-activity'
import { makeBrand, type Brand } from './brand'

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
  /** private_key_jwt clients' public keys (their JWKS, or their jwks_uri fetched and cached). */
  clientKeys: ClientKeys
  settingsCache: SettingsCache
  /** The open settings streams of this instance. */
  settingsHub: SettingsHub
  /** Counters and histograms for GET /metrics (served only on METRICS_ADDRESS). */
  metrics: Metrics
  /** The audit log (batched writes). */
  audit: AuditLog
  /** Sessions' "last active", written in batches off the request path. */
  sessionActivity: SessionActivity
  /** The server's key for CSRF tokens (shared by every instance through the database). */
  csrfKey: string
  /** The server's key for secrets it must read back (TOTP seeds), shared the same way. */
  sealKey: SealKey
  /** The operator's brand (BRAND_*), as pages show it. */
  brand: Brand
}

export interface AppDeps {
  store: Store
  config: Config
  clock?: Clock
  log?: Logger
}

/** The context every feature is built from: made once per process, its secrets read (or made) in one commit. */
export async function createContext(deps: AppDeps): Promise<AppContext> {
  const clock = deps.clock ?? systemClock
  const { store } = deps
  const log = deps.log ?? silentLogger
  const tokens: AccessTokens = new AccessTokens(store, clock, deps.config.accessTokenTtl, store.changes, deps.config.tokenCacheSize, {
    issuer: deps.config.issuer,
    keys: () => signingKeys.verifier(),
  })
  const settingsHub = new SettingsHub({ store, clock, tokens, config: deps.config, log })
  // An ID token lives as long as an access token; a retired key is published that much longer.
  const signingKeys = new SigningKeys(store, clock, deps.config.accessTokenTtl * 1000)
  signingKeys.start()
  const sessionActivity = new SessionActivity(store, log, deps.config.sessionIdleTtl)
  sessionActivity.start()
  // Asked together, the two secrets share one commit (a first start writes both).
  const [csrfKey, sealSecret] = await Promise.all([store.serverSecret('csrf', randomToken, clock.now()), store.serverSecret('seal', randomToken, clock.now())])
  return {
    store,
    config: deps.config,
    clock,
    log,
    tokens,
    refreshTokens: new RefreshTokens(store, clock, deps.config.refreshTokenTtl, deps.config.refreshTokenReuseGrace),
    signingKeys,
    resources: new ResourceDirectory(store, deps.config.issuer),
    metadataClients: new MetadataClients({ store, config: deps.config, clock, log }),
    clientKeys: new ClientKeys({ config: deps.config, clock, log }),
    settingsCache: new SettingsCache(store.changes, store.engine === 'sqlite' ? deps.config.settingsCacheSize : 0),
    settingsHub,
    audit: new AuditLog({ store, clock, log, config: deps.config }),
    metrics: new Metrics({
      tokenCache: () => tokens.cacheCounts,
      streams: () => settingsHub.count,
      outbox: async () => ({ pending: (await store.mail.outboxCounts()).waiting }),
      db: () => store.stats,
    }),
    sessionActivity,
    csrfKey,
    sealKey: await sealKeyFrom(sealSecret),
    brand: makeBrand(deps.config.brand, log),
  }
}
