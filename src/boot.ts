/**
 * Process-wide settings of the `latchkey` command, imported before anything else by the entry
 * point (module evaluation follows import order), so they hold before Elysia loads.
 */

// Elysia reads NODE_ENV once, when it loads. Its development mode walks request bodies with
// extra diagnostics (deeply nested JSON cost seconds per request) and must never serve.
process.env.NODE_ENV = 'production'

// Everything Latchkey creates — the database, its -wal/-shm, backups, the data folder — is for
// its own user only (SPEC: 0600 files, 0700 folders).
process.umask(0o077)
