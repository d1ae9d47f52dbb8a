import { describe, expect, test } from 'bun:test'
import { DEVICE_COOKIE_SECONDS } from '../../src/accounts/device-cookie'
import { TOUCHES_PER_WRITE } from '../../src/accounts/session-activity'
import { DEVICES_PURGED_PER_RUN } from '../../src/db/store'
import { sha256 } from '../../src/lib/crypto'
import { addUser, createTestApp } from '../helpers'
import { CHROME_LINUX, signInFrom, signedIn } from './flows'

const MIN = 60_000

describe('session data and lifetimes (SPEC "Sessions")', () => {
  test('a session records when it started, its browser (bounded), its address and its device (hashed)', async () => {
    const t = await createTestApp()
    await addUser(t)
    const jar = await signInFrom(t, { ua: CHROME_LINUX + ' x'.repeat(400), address: '203.0.113.7' })
    const [raw] = await t.rows('SELECT sid, created_at, last_active_at, user_agent, address, device_hash, expires_at, id_hash FROM sessions')
    const row: Record<string, unknown> = { ...raw, created_at: Number(raw!.created_at), last_active_at: Number(raw!.last_active_at), expires_at: Number(raw!.expires_at) }
    const now = t.clock.now()
    expect(row).toMatchObject({ created_at: now, last_active_at: now, address: '203.0.113.7', device_hash: sha256(jar.lk_device!), expires_at: now + 2_592_000_000, id_hash: sha256(jar.lk_session!) })
    expect((row!.user_agent as string).length).toBe(512)
    expect(row!.sid).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(row!.sid).not.toBe(jar.lk_session)
    // The device cookie is not the session and outlives it (400 days).
    expect(jar.lk_device).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await t.rows('SELECT device_hash FROM user_devices')).toEqual([{ device_hash: sha256(jar.lk_device!) }])
  })

  test('the purge deletes known devices older than the device cookie (400 days), at most a batch a run', async () => {
    const t = await createTestApp()
    const ann = await addUser(t)
    const jar = await signInFrom(t)
    const t0 = t.clock.now()
    // Browsers the account saw a moment before this one: one more than a purge takes.
    await t.rows(
      `INSERT INTO user_devices (user_id, device_hash, created_at)
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT CAST(? AS TEXT), 'old-' || i, CAST(? AS BIGINT) FROM n`,
      DEVICES_PURGED_PER_RUN + 1,
      ann.id,
      t0 - 1,
    )
    const windows = { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 0, mail: 0, settingChanges: 0, devices: DEVICE_COOKIE_SECONDS * 1000 }
    const count = async () => Number((await t.row('SELECT count(*) AS n FROM user_devices'))!.n)
    // Within the cookie's life nothing goes.
    t.clock.advance(DEVICE_COOKIE_SECONDS * 1000 - 1)
    await t.store.purgeExpired(t.clock.now(), windows)
    expect(await count()).toBe(DEVICES_PURGED_PER_RUN + 2)
    t.clock.advance(1)
    expect(await t.store.purgeExpired(t.clock.now(), windows)).toBeGreaterThanOrEqual(DEVICES_PURGED_PER_RUN)
    expect(await count()).toBe(2)
    await t.store.purgeExpired(t.clock.now(), windows)
    // The browser seen at t0 stays until its cookie could have lived 400 days too.
    expect(await t.rows('SELECT device_hash FROM user_devices')).toEqual([{ device_hash: sha256(jar.lk_device!) }])
    t.clock.advance(1)
    await t.store.purgeExpired(t.clock.now(), windows)
    expect(await count()).toBe(0)
  })

  test('SESSION_TTL after sign-in ends a session however active it is', async () => {
    const t = await createTestApp({ SESSION_TTL: '3600', SESSION_IDLE_TTL: '600' })
    await addUser(t)
    const jar = await signInFrom(t)
    for (let i = 0; i < 6; i++) {
      t.clock.advance(9 * MIN)
      expect(await signedIn(t, jar)).toBe(true)
      await t.ctx.sessionActivity.flush()
    }
    t.clock.advance(6 * MIN - 1)
    expect(await signedIn(t, jar)).toBe(true)
    t.clock.advance(1) // exactly SESSION_TTL after the sign-in
    expect(await signedIn(t, jar)).toBe(false)
  })

  test('SESSION_IDLE_TTL after the last written activity; activity is noted in memory and written in one batch', async () => {
    const t = await createTestApp({ SESSION_IDLE_TTL: '600' }) // a tenth: activity written at most once a minute
    expect(t.ctx.sessionActivity.interval).toBe(MIN)
    await addUser(t)
    await addUser(t, 'bob@example.com', 'Bob')
    const ann = await signInFrom(t)
    const bob = await signInFrom(t, { email: 'bob@example.com' })
    const t0 = t.clock.now()
    const lastActive = async () => (await t.rows('SELECT last_active_at FROM sessions ORDER BY last_active_at, sid')).map((r) => Number(r.last_active_at))

    t.clock.advance(MIN - 1)
    expect(await signedIn(t, ann)).toBe(true)
    expect(t.ctx.sessionActivity.size).toBe(0) // within the minute: nothing to write
    t.clock.advance(1)
    expect(await signedIn(t, ann)).toBe(true)
    expect(await signedIn(t, bob)).toBe(true)
    expect(await signedIn(t, ann)).toBe(true)
    expect(t.ctx.sessionActivity.size).toBe(2)
    // Nothing written on the request path.
    expect(await lastActive()).toEqual([t0, t0])
    await t.ctx.sessionActivity.flush()
    expect(t.ctx.sessionActivity.size).toBe(0)
    expect(await lastActive()).toEqual([t0 + MIN, t0 + MIN])

    // Ann stays active; Bob does not: 600 s after his last written activity he is signed out.
    t.clock.advance(599_000)
    expect(await signedIn(t, ann)).toBe(true)
    await t.ctx.sessionActivity.flush()
    t.clock.advance(1000)
    expect(await signedIn(t, bob)).toBe(false)
    expect(await signedIn(t, ann)).toBe(true)
    // The purge removes the idle session (SESSION_IDLE_TTL in its windows), not the active one.
    const windows = { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 0, mail: 0, settingChanges: 0, sessionIdle: 600_000 }
    expect(await t.store.purgeExpired(t.clock.now(), windows)).toBeGreaterThanOrEqual(1)
    expect((await t.rows('SELECT user_id FROM sessions')).length).toBe(1)
  })

  test('pending touches are bounded; a write that fails is logged, and the request never waits for it', async () => {
    const t = await createTestApp({ SESSION_IDLE_TTL: '600' })
    await addUser(t)
    const jar = await signInFrom(t)
    t.clock.advance(MIN)
    const touchSessions = t.store.sessions.touchSessions.bind(t.store.sessions)
    let release!: () => void
    t.store.sessions.touchSessions = (touches) => new Promise<void>((r) => (release = r)).then(() => touchSessions(touches))
    expect(await signedIn(t, jar)).toBe(true)
    const flushing = t.ctx.sessionActivity.flush() // the write hangs…
    expect(await signedIn(t, jar)).toBe(true) // …and requests go on
    release()
    await flushing
    expect(Number((await t.rows('SELECT last_active_at FROM sessions'))[0]!.last_active_at)).toBe(t.clock.now())
  })

  test('a flush writes its touches a bounded number at a time, the event loop turning between the writes', async () => {
    // One write of 10,000 touches held SQLite's event loop 100–140 ms: every request waited (issue 35's cliff).
    const t = await createTestApp({ SESSION_IDLE_TTL: '600' })
    await addUser(t)
    const jar = await signInFrom(t)
    t.clock.advance(MIN)
    expect(await signedIn(t, jar)).toBe(true) // the one real session, noted first
    const count = 2 * TOUCHES_PER_WRITE + 44
    for (let i = 1; i < count; i++) t.ctx.sessionActivity.touchHash(sha256(`gone ${i}`), 0, t.clock.now())
    let turns = 0
    let turning = true
    const turn = () => {
      turns++
      if (turning) setImmediate(turn)
    }
    setImmediate(turn)
    const writes: Array<{ size: number; turn: number }> = []
    const touchSessions = t.store.sessions.touchSessions.bind(t.store.sessions)
    t.store.sessions.touchSessions = (touches) => (writes.push({ size: touches.size, turn: turns }), touchSessions(touches))
    await t.ctx.sessionActivity.flush()
    turning = false
    expect(writes.map((w) => w.size)).toEqual([TOUCHES_PER_WRITE, TOUCHES_PER_WRITE, 44])
    expect(writes[1]!.turn).toBeGreaterThan(writes[0]!.turn)
    expect(writes[2]!.turn).toBeGreaterThan(writes[1]!.turn)
    expect(t.ctx.sessionActivity.size).toBe(0)
    expect(Number((await t.rows('SELECT last_active_at FROM sessions'))[0]!.last_active_at)).toBe(t.clock.now())
  })
})
