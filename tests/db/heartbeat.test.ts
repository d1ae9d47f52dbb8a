import { expect, test } from 'bun:test'
import { Heartbeat } from '../../src/db/pg/change-feed'

/** The PostgreSQL change feed's liveness rule (engine-free: plain counting). */
test('a LISTEN connection is trusted while at most three beats are outstanding, however slowly they go', () => {
  const heartbeat = new Heartbeat()
  // A busy event loop: each beat goes out late and comes back late, one at a time.
  for (let i = 0; i < 100; i++) {
    heartbeat.beat()
    expect(heartbeat.alive).toBe(true)
    heartbeat.echo()
  }
  // A dead connection: beats go out, nothing comes back; the fourth unanswered one ends the trust.
  for (let i = 0; i < 3; i++) heartbeat.beat()
  expect(heartbeat.alive).toBe(true)
  heartbeat.beat()
  expect(heartbeat.alive).toBe(false)
  // A late echo does not count for more than was sent; a new connection starts clean.
  for (let i = 0; i < 10; i++) heartbeat.echo()
  expect(heartbeat.alive).toBe(true)
  for (let i = 0; i < 4; i++) heartbeat.beat()
  expect(heartbeat.alive).toBe(false)
  heartbeat.reset()
  expect(heartbeat.alive).toBe(true)
})
