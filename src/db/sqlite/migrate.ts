import type { Database } from 'bun:sqlite'
import journal from '../../../drizzle/sqlite/meta/_journal.json'
import init from '../../../drizzle/sqlite/0000_init.sql' with { type: 'text' }
import settingCounts from '../../../drizzle/sqlite/0001_setting_counts.sql' with { type: 'text' }
import settingCountTriggers from '../../../drizzle/sqlite/0002_setting_count_triggers.sql' with { type: 'text' }
import tokenSelector from '../../../drizzle/sqlite/0003_token_selector.sql' with { type: 'text' }
import userQuotaAndSecrets from '../../../drizzle/sqlite/0004_user_quota_and_secrets.sql' with { type: 'text' }
import loginThrottle from '../../../drizzle/sqlite/0005_login_throttle.sql' with { type: 'text' }
import refreshTokens from '../../../drizzle/sqlite/0006_refresh_tokens.sql' with { type: 'text' }
import openidConnect from '../../../drizzle/sqlite/0007_openid_connect.sql' with { type: 'text' }
import settingsClustered from '../../../drizzle/sqlite/0008_settings_clustered.sql' with { type: 'text' }
import refreshFamilies from '../../../drizzle/sqlite/0009_refresh_families.sql' with { type: 'text' }
import passkeysTwoStep from '../../../drizzle/sqlite/0010_passkeys_two_step.sql' with { type: 'text' }
import mail from '../../../drizzle/sqlite/0011_mail.sql' with { type: 'text' }
import resources from '../../../drizzle/sqlite/0012_resources.sql' with { type: 'text' }
import agents from '../../../drizzle/sqlite/0013_agents.sql' with { type: 'text' }
import settingsSync from '../../../drizzle/sqlite/0014_settings_sync.sql' with { type: 'text' }
import operators from '../../../drizzle/sqlite/0015_operators.sql' with { type: 'text' }
import idTokenAlg from '../../../drizzle/sqlite/0016_id_token_alg.sql' with { type: 'text' }
import introspects from '../../../drizzle/sqlite/0017_introspects.sql' with { type: 'text' }
import sessionsMigration from '../../../drizzle/sqlite/0018_sessions.sql' with { type: 'text' }
import sites from '../../../drizzle/sqlite/0019_sites.sql' with { type: 'text' }
import machines from '../../../drizzle/sqlite/0020_machines.sql' with { type: 'text' }
import clientLogos from '../../../drizzle/sqlite/0021_client_logos.sql' with { type: 'text' }
import avatars from '../../../drizzle/sqlite/0022_avatars.sql' with { type: 'text' }
import providers from '../../../drizzle/sqlite/0023_providers.sql' with { type: 'text' }
import userLanguage from '../../../drizzle/sqlite/0024_user_language.sql' with { type: 'text' }

/**
 * Migrations are imported (not read from disk) so `bun build --compile` embeds them.
 * Add each new drizzle-kit migration here; a test checks this list matches the journal.
 */
export const embeddedMigrations: Record<string, string> = {
  '0000_init': init,
  '0001_setting_counts': settingCounts,
  '0002_setting_count_triggers': settingCountTriggers,
  '0003_token_selector': tokenSelector,
  '0004_user_quota_and_secrets': userQuotaAndSecrets,
  '0005_login_throttle': loginThrottle,
  '0006_refresh_tokens': refreshTokens,
  '0007_openid_connect': openidConnect,
  '0008_settings_clustered': settingsClustered,
  '0009_refresh_families': refreshFamilies,
  '0010_passkeys_two_step': passkeysTwoStep,
  '0011_mail': mail,
  '0012_resources': resources,
  '0013_agents': agents,
  '0014_settings_sync': settingsSync,
  '0015_operators': operators,
  '0016_id_token_alg': idTokenAlg,
  '0017_introspects': introspects,
  '0018_sessions': sessionsMigration,
  '0019_sites': sites,
  '0020_machines': machines,
  '0021_client_logos': clientLogos,
  '0022_avatars': avatars,
  '0023_providers': providers,
  '0024_user_language': userLanguage,
}

export interface MigrationResult {
  applied: string[]
}

/** Applies every pending migration in one transaction: an upgrade happens whole or not at all. */
export function migrate(sqlite: Database): MigrationResult {
  sqlite.run(
    'CREATE TABLE IF NOT EXISTS latchkey_migrations (tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  )
  const done = new Set(sqlite.query<{ tag: string }, []>('SELECT tag FROM latchkey_migrations').all().map((r) => r.tag))
  const pending = journal.entries.filter((entry) => !done.has(entry.tag))
  if (pending.length === 0) return { applied: [] }
  sqlite.transaction(() => {
    for (const entry of pending) {
      const sql = embeddedMigrations[entry.tag]
      if (sql === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`)
      for (const statement of sql.split('--> statement-breakpoint')) {
        if (statement.trim()) sqlite.run(statement)
      }
      sqlite.run('INSERT INTO latchkey_migrations (tag, hash, applied_at) VALUES (?, ?, ?)', [entry.tag, Bun.SHA256.hash(sql, 'hex') as unknown as string, Date.now()])
    }
  }).immediate()
  return { applied: pending.map((entry) => entry.tag) }
}
