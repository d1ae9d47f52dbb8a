import type { Store } from '../db/store'
import { randomToken, sha256 } from '../lib/crypto'
import type { Logger } from '../lib/log'

// The setup link alone, without the pages: `serve` and the CLI make one without loading the app.

/** SPEC "First run": a setup link is good for one hour, once. */
export const SETUP_TTL_MS = 60 * 60 * 1000
/** The server value holding the live token's SHA-256 (`used:` + it, once used); never the token. */
export const SETUP = 'setup'

/** A new setup link, replacing (so invalidating) the last one: `latchkey setup-link`, and `serve` while no admin exists. */
export async function newSetupLink(store: Store, issuer: string, now: number): Promise<string> {
  const token = randomToken()
  await store.putServerValue(SETUP, sha256(token), now)
  return `${issuer}/setup?token=${token}`
}

/**
 * At start, while no enabled admin exists: one log line with a new setup link. The one place a
 * secret is logged, on purpose (SPEC "First run"): whoever reads the log runs the server anyway,
 * and the link makes one admin, once, within the hour.
 */
export async function offerSetupLink(store: Store, issuer: string, now: number, log: Logger): Promise<void> {
  if (await store.users.adminExists()) return
  // warn, not info: LOG_LEVEL=warn (no access log) still shows it.
  log.warn('no admin yet: open the setup link to create the first admin (valid 1 hour, once; `latchkey setup-link` makes a new one)', { setup_link: await newSetupLink(store, issuer, now) })
}
