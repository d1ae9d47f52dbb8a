import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/lib/log'
import { Outbox, retryDelay, smtpTransport } from '../../src/mail/outbox'
import { verifyEmailMessage } from '../../src/mail/messages'
import { speech } from '../../src/i18n'
import { createTestApp, type TestApp } from '../helpers'
import { TestSmtp, subjectOf } from './smtp'

let smtp: TestSmtp

beforeAll(async () => {
  smtp = await TestSmtp.start()
})
afterAll(async () => {
  await smtp.down()
})

function outboxFor(t: TestApp, lines: string[] = []) {
  const log = createLogger('info', (s) => lines.push(s))
  const transport = smtpTransport(smtp.url, { ca: smtp.tls.cert })
  return { outbox: new Outbox(t.store, t.clock, log, transport, 'Latchkey <no-reply@localhost>', ['s3cret-pass']), log }
}

const mail = (to: string) => verifyEmailMessage({ email: to, speech: speech('en'), brand: 'Latchkey' }, 'http://localhost:3000/verify-email?token=' + 'a'.repeat(43))

describe('the outbox', () => {
  test('a queued message goes over STARTTLS to the SMTP server with a text and an HTML part, then is stamped sent', async () => {
    const t = await createTestApp()
    const { outbox } = outboxFor(t)
    const before = smtp.received.length
    await t.store.mail.enqueue([mail('ann@example.com')], t.clock.now())
    expect(await t.store.mail.outboxCounts()).toEqual({ waiting: 1, sent: 0, failed: 0 })
    expect(await outbox.tick()).toBe(1)
    const [got] = (await smtp.waitFor(before + 1)).slice(before)
    expect(got!.to).toEqual(['ann@example.com'])
    expect(got!.secure).toBe(true)
    expect(got!.from).toBe('no-reply@localhost')
    expect(subjectOf(got!.raw)).toBe('Verify your email')
    expect(got!.raw).toContain('Content-Type: text/plain')
    expect(got!.raw).toContain('Content-Type: text/html')
    expect(await t.store.mail.outboxCounts()).toEqual({ waiting: 0, sent: 1, failed: 0 })
    expect(await outbox.tick()).toBe(0)
  })

  test('retries: 30 s, then doubling up to 10 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 10].map(retryDelay)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 600_000, 600_000, 600_000])
  })

  test('a server that is down delays the message, which goes once it is back; nothing is lost', async () => {
    const t = await createTestApp()
    const lines: string[] = []
    const { outbox, log } = outboxFor(t, lines)
    await smtp.down()
    try {
      await t.store.mail.enqueue([mail('bob@example.com')], t.clock.now())
      expect(await outbox.tick()).toBe(1)
      expect(await t.store.mail.outboxCounts()).toEqual({ waiting: 1, sent: 0, failed: 0 })
      // Not due again before its 30 s.
      t.clock.advance(29_000)
      expect(await outbox.tick()).toBe(0)
    } finally {
      await smtp.up()
    }
    const before = smtp.received.length
    t.clock.advance(1_000)
    expect(await outbox.tick()).toBe(1)
    expect((await smtp.waitFor(before + 1)).at(-1)!.to).toEqual(['bob@example.com'])
    expect(await t.store.mail.outboxCounts()).toEqual({ waiting: 0, sent: 1, failed: 0 })
    log.flush()
    expect(lines.join('')).toContain('"msg":"mail delayed"')
    expect(lines.join('')).not.toContain('s3cret-pass')
  })

  test('after 24 hours of failures the message is given up with a warn event', async () => {
    const t = await createTestApp()
    const lines: string[] = []
    const { outbox, log } = outboxFor(t, lines)
    await smtp.down()
    try {
      await t.store.mail.enqueue([mail('cat@example.com')], t.clock.now())
      let attempts = 0
      for (let i = 0; i < 400 && (await t.store.mail.outboxCounts()).waiting > 0; i++) {
        attempts += await outbox.tick()
        t.clock.advance(600_000)
      }
      expect(await t.store.mail.outboxCounts()).toEqual({ waiting: 0, sent: 0, failed: 1 })
      // 30 s, 1, 2, 4, 8 minutes, then every 10 minutes until a day has passed.
      expect(attempts).toBeGreaterThan(140)
      expect(attempts).toBeLessThan(150)
    } finally {
      await smtp.up()
    }
    log.flush()
    const given = lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.msg === 'mail given up')
    expect(given).toHaveLength(1)
    expect(given[0]).toMatchObject({ level: 'warn', subject: 'Verify your email' })
  })

  test('two senders at the same moment send each message once (the lease)', async () => {
    const t = await createTestApp()
    const a = outboxFor(t).outbox
    const b = outboxFor(t).outbox
    const before = smtp.received.length
    await t.store.mail.enqueue(Array.from({ length: 20 }, (_, i) => mail(`user${i}@example.com`)), t.clock.now())
    let sent = 0
    while ((await t.store.mail.outboxCounts()).waiting > 0) sent += (await Promise.all([a.tick(), b.tick()])).reduce((x, y) => x + y, 0)
    expect(sent).toBe(20)
    const got = (await smtp.waitFor(before + 20)).slice(before)
    expect(new Set(got.map((m) => m.to[0])).size).toBe(20)
    expect(got).toHaveLength(20)
  })

  test('a sent message is deleted a week later', async () => {
    const t = await createTestApp()
    const { outbox } = outboxFor(t)
    await t.store.mail.enqueue([mail('dan@example.com')], t.clock.now())
    await outbox.tick()
    const week = 7 * 24 * 3600_000
    const purge = (at: number) => t.store.purgeExpired(at, { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 3600_000, mail: week, settingChanges: 30 * 86_400_000 })
    expect(await purge(t.clock.now() + week - 1000)).toBe(0)
    expect(await purge(t.clock.now() + week + 1000)).toBe(1)
    expect(await t.store.mail.outboxCounts()).toEqual({ waiting: 0, sent: 0, failed: 0 })
  })
})
