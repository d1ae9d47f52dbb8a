import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { Writer } from '../../src/db/sqlite/writer'
import { nextTurn } from '../helpers'

function setup() {
  const sqlite = new Database(':memory:')
  sqlite.run('PRAGMA foreign_keys = ON')
  sqlite.run('CREATE TABLE parent (id INTEGER PRIMARY KEY)')
  sqlite.run('CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)')
  sqlite.run('CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id))')
  // Count the COMMITs the writer really executes.
  let commits = 0
  const prepare = sqlite.prepare.bind(sqlite)
  sqlite.prepare = ((query: string, ...rest: unknown[]) => {
    const statement = prepare(query, ...(rest as []))
    if (query === 'COMMIT') {
      const run = statement.run.bind(statement)
      statement.run = ((...args: never[]) => {
        commits++
        return run(...args)
      }) as typeof statement.run
    }
    return statement
  }) as typeof sqlite.prepare
  const writer = new Writer(sqlite)
  const rows = () => sqlite.query('SELECT k, v FROM kv ORDER BY k').all()
  return { sqlite, writer, rows, commits: () => commits }
}

describe('group commit', () => {
  test('held writes wait (reads do not) and run together once released; a flush at shutdown runs them anyway', async () => {
    const { sqlite, writer, rows, commits } = setup()
    writer.hold()
    let done = 0
    const pending = Array.from({ length: 5 }, (_, i) => writer.write(() => sqlite.run('INSERT INTO kv VALUES (?, ?)', [`k${i}`, 'v'])).then(() => done++))
    // An unheld writer commits in the next turn (setImmediate): two turns pass, nothing is written.
    await nextTurn()
    await nextTurn()
    expect([done, rows(), commits()]).toEqual([0, [], 0])
    writer.release()
    await Promise.all(pending)
    expect([done, rows().length, commits()]).toEqual([5, 5, 1])
    writer.hold()
    const last = writer.write(() => sqlite.run("INSERT INTO kv VALUES ('last', 'v')"))
    writer.flush()
    await last
    expect(rows()).toHaveLength(6)
  })

  test('writes in the same turn share one transaction and one COMMIT', async () => {
    const { sqlite, writer, rows, commits } = setup()
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => writer.write(() => sqlite.run('INSERT INTO kv VALUES (?, ?)', [`k${i}`, 'v']).changes)),
    )
    expect(results).toEqual(Array(50).fill(1))
    expect(commits()).toBe(1)
    expect(rows()).toHaveLength(50)
  })

  test('a failing job is rolled back alone; the others commit', async () => {
    const { sqlite, writer, rows } = setup()
    const outcomes = await Promise.allSettled([
      writer.write(() => sqlite.run("INSERT INTO kv VALUES ('a', '1')")),
      writer.write(() => {
        sqlite.run("INSERT INTO kv VALUES ('b', '1')")
        throw new Error('nope')
      }),
      writer.write(() => sqlite.run("INSERT INTO kv VALUES ('c', '1')")),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(rows()).toEqual([
      { k: 'a', v: '1' },
      { k: 'c', v: '1' },
    ])
  })

  test('when the COMMIT fails, no write of the batch is acknowledged and none is kept', async () => {
    const { sqlite, writer, rows } = setup()
    const outcomes = await Promise.allSettled([
      writer.write(() => sqlite.run("INSERT INTO kv VALUES ('a', '1')")),
      // A deferred foreign-key violation passes the statement and fails the COMMIT.
      writer.write(() => {
        sqlite.run('PRAGMA defer_foreign_keys = ON')
        sqlite.run('INSERT INTO child VALUES (1, 999)')
      }),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])
    expect(rows()).toEqual([])
    expect(sqlite.inTransaction).toBe(false)
    // The writer keeps working afterwards.
    await writer.write(() => sqlite.run("INSERT INTO kv VALUES ('z', '1')"))
    expect(rows()).toEqual([{ k: 'z', v: '1' }])
  })

  test('writes from different turns commit separately, in order', async () => {
    const { sqlite, writer, rows, commits } = setup()
    await writer.write(() => sqlite.run("INSERT INTO kv VALUES ('a', '1')"))
    await writer.write(() => sqlite.run("UPDATE kv SET v = '2' WHERE k = 'a'"))
    expect(commits()).toBe(2)
    expect(rows()).toEqual([{ k: 'a', v: '2' }])
  })
})

describe('group commit fallback', () => {
  test('a job that wrote before throwing leaves nothing, even after the batch is run again', async () => {
    const { sqlite, writer, rows, commits } = setup()
    let runs = 0
    const outcomes = await Promise.allSettled([
      writer.write(() => {
        runs++
        sqlite.run("INSERT INTO kv VALUES ('first', '1')")
      }),
      writer.write(() => {
        sqlite.run("INSERT INTO kv VALUES ('half', 'written')")
        throw new Error('fails after writing')
      }),
      writer.write(() => sqlite.run("INSERT INTO kv VALUES ('last', '1')")),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(rows()).toEqual([
      { k: 'first', v: '1' },
      { k: 'last', v: '1' },
    ])
    expect(runs).toBe(2) // optimistic pass, then the isolated pass
    expect(commits()).toBe(1)
  })
})
