import type { Db } from './client'

const cache = new WeakMap<Db, Map<string, unknown>>()

/**
 * A Drizzle prepared statement made once per database and reused: the hot paths (token
 * checks, settings reads, code exchange) then skip building and compiling SQL per request.
 */
export function prepared<T>(db: Db, name: string, build: () => T): T {
  let statements = cache.get(db)
  if (!statements) cache.set(db, (statements = new Map()))
  let statement = statements.get(name) as T | undefined
  if (statement === undefined) statements.set(name, (statement = build()))
  return statement
}
