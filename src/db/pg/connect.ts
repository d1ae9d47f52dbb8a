import { SQL } from 'bun'

type Options = Omit<SQL.PostgresOrMySQLOptions, 'url'>

/**
 * A client for DATABASE_URL. Every part the URL names is passed explicitly: Bun's client lets
 * PG* environment variables win over the URL (measured: with PGUSER/PGHOST set, the URL's
 * database was ignored), and DATABASE_URL must mean exactly what it says.
 */
export function connect(url: string, options: Options = {}): SQL {
  const u = new URL(url)
  const named: Options = {}
  if (u.hostname) named.hostname = u.hostname.replace(/^\[|\]$/g, '')
  if (u.port) named.port = Number(u.port)
  if (u.username) named.username = decodeURIComponent(u.username)
  if (u.password) named.password = decodeURIComponent(u.password)
  if (u.pathname.length > 1) named.database = decodeURIComponent(u.pathname.slice(1))
  return new SQL({ url, ...named, ...options })
}
