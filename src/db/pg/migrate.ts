import type { SQL } from 'bun'
import journal from '../../../drizzle/pg/meta/_journal.json'
import init from '../../../drizzle/pg/0000_init.sql' with { type: 'text' }
import triggers from '../../../drizzle/pg/0001_triggers.sql' with { type: 'text' }
import refreshTokens from '../../../drizzle/pg/0002_refresh_tokens.sql' with { type: 'text' }
import openidConnect from '../../../drizzle/pg/0003_openid_connect.sql' with { type: 'text' }
import purgeQuietly from '../../../drizzle/pg/0004_purge_quietly.sql' with { type: 'text' }
import notifyTokenIds from '../../../drizzle/pg/0005_notify_token_ids.sql' with { type: 'text' }
import refreshFamilies from '../../../drizzle/pg/0006_refresh_families.sql' with { type: 'text' }
import passkeysTwoStep from '../../../drizzle/pg/0007_passkeys_two_step.sql' with { type: 'text' }
import mail from '../../../drizzle/pg/0008_mail.sql' with { type: 'text' }
import resources from '../../../drizzle/pg/0009_resources.sql' with { type: 'text' }
import agents from '../../../drizzle/pg/0010_agents.sql' with { type: 'text' }
import settingsSync from '../../../drizzle/pg/0011_settings_sync.sql' with { type: 'text' }
import operators from '../../../drizzle/pg/0012_operators.sql' with { type: 'text' }
import idTokenAlg from '../../../drizzle/pg/0013_id_token_alg.sql' with { type: 'text' }
import oneRoundTrip from '../../../drizzle/pg/0014_one_round_trip.sql' with { type: 'text' }
import settingsBatches from '../../../drizzle/pg/0015_settings_batches.sql' with { type: 'text' }
import introspects from '../../../drizzle/pg/0016_introspects.sql' with { type: 'text' }
import notifyUserUpdates from '../../../drizzle/pg/0017_notify_user_updates.sql' with { type: 'text' }
import sessionsMigration from '../../../drizzle/pg/0018_sessions.sql' with { type: 'text' }
import sites from '../../../drizzle/pg/0019_sites.sql' with { type: 'text' }
import machines from '../../../drizzle/pg/0020_machines.sql' with { type: 'text' }
import clientLogos from '../../../drizzle/pg/0021_client_logos.sql' with { type: 'text' }
import avatars from '../../../drizzle/pg/0022_avatars.sql' with { type: 'text' }
import providers from '../../../drizzle/pg/0023_providers.sql' with { type: 'text' }
import userLanguage from '../../../drizzle/pg/0024_user_language.sql' with { type: 'text' }
import notifySessionsSites from '../../../drizzle/pg/0025_notify_sessions_sites.sql' with { type: 'text' }
import notifyClients from '../../../drizzle/pg/0026_notify_clients.sql' with { type: 'text' }
import notifyDevices from '../../../drizzle/pg/0027_notify_devices.sql' with { type: 'text' }

/**
 * Migrations are imported (not read from disk) so `bun build --compile` embeds them. Add each
 * new drizzle-kit migration here; a test checks this list matches the journal.
 */
export const embeddedMigrations: Record<string, string> = {
  '0000_init': init,
  '0001_triggers': triggers,
  '0002_refresh_tokens': refreshTokens,
  '0003_openid_connect': openidConnect,
  '0004_purge_quietly': purgeQuietly,
  '0005_notify_token_ids': notifyTokenIds,
  '0006_refresh_families': refreshFamilies,
  '0007_passkeys_two_step': passkeysTwoStep,
  '0008_mail': mail,
  '0009_resources': resources,
  '0010_agents': agents,
  '0011_settings_sync': settingsSync,
  '0012_operators': operators,
  '0013_id_token_alg': idTokenAlg,
  '0014_one_round_trip': oneRoundTrip,
  '0015_settings_batches': settingsBatches,
  '0016_introspects': introspects,
  '0017_notify_user_updates': notifyUserUpdates,
  '0018_sessions': sessionsMigration,
  '0019_sites': sites,
  '0020_machines': machines,
  '0021_client_logos': clientLogos,
  '0022_avatars': avatars,
  '0023_providers': providers,
  '0024_user_language': userLanguage,
  '0025_notify_sessions_sites': notifySessionsSites,
  '0026_notify_clients': notifyClients,
  '0027_notify_devices': notifyDevices,
}

/** pg_advisory_xact_lock key: "latchkey" as a number. Instances starting together queue on it. */
const MIGRATION_LOCK = 0x6c617463686b6579n & 0x7fffffffffffffffn

/**
 * Applies every pending migration in one transaction, under an advisory lock: when several
 * instances start at once, one migrates and the others wait, then find nothing to do.
 */
export async function migrate(sql: SQL): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await tx`CREATE TABLE IF NOT EXISTS latchkey_migrations (tag text PRIMARY KEY, hash text NOT NULL, applied_at bigint NOT NULL)`
    const done = new Set((await tx`SELECT tag FROM latchkey_migrations`).map((r: { tag: string }) => r.tag))
    const pending = journal.entries.filter((entry) => !done.has(entry.tag))
    for (const entry of pending) {
      const text = embeddedMigrations[entry.tag]
      if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`)
      for (const statement of text.split('--> statement-breakpoint')) if (statement.trim()) await tx.unsafe(statement)
      await tx`INSERT INTO latchkey_migrations (tag, hash, applied_at) VALUES (${entry.tag}, ${Bun.SHA256.hash(text, 'hex') as unknown as string}, ${Date.now()})`
    }
    return pending.map((entry) => entry.tag)
  })
}
