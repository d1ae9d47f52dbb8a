/**
 * The server's purge loop (src/server.ts), as it runs: started with the real `startServer` on a
 * database of its own (a SQLite file, or a fresh PostgreSQL database in the suite's PostgreSQL
 * pass), with AUDIT_DAYS set and a short interval, it deletes the audit events older than
 * AUDIT_DAYS and keeps the newer ones.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { openStore } from '../../src/db/open'
import type { AuditEvent } from '../../src/db/store'
import { createLogger } from '../../src/lib/log'
import { startServer } from '../../src/server'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'
import { until } from '../wait'

const DAY = 86_400_000
const dir = mkdtempSync(join(tmpdir(), 'latchkey-purge-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const event = (kind: string, at: number): AuditEvent => ({ at, kind, userId: null, clientId: null, address: null, userAgent: null, detail: null })

describe('the purge loop', () => {
  test('deletes audit events older than AUDIT_DAYS, on its interval, and keeps the newer ones', async () => {
    const databaseUrl = testEngine === 'postgres' ? await freshPgDatabase() : join(dir, 'db.sqlite')
    const config = loadConfig({ DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: '0', AUDIT_DAYS: '30' })
    const lines: string[] = []
    const running = await startServer(config, createLogger('debug', (line) => lines.push(line)), { purgeEveryMs: 50 })
    // Another process's writes, as the CLI's or a second instance's would be.
    const { store } = await openStore(config)
    try {
      const now = Date.now()
      await store.audit.record([event('test.expired', now - 31 * DAY), event('test.kept', now - 29 * DAY), event('test.new', now)])
      const purged = () => lines.join('').split('\n').some((l) => l.includes('"msg":"purged"'))
      // The loop logs what it removed once its delete has committed.
      await until(purged, 'the purge loop to log a purge', { timeoutMs: 10_000 })
      expect((await store.audit.list({ limit: 10 })).map((e) => e.kind)).toEqual(['test.new', 'test.kept'])
    } finally {
      await store.close()
      await running.stop()
    }
  }, 30_000)
})
