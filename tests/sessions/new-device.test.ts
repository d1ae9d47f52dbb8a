import { describe, expect, test } from 'bun:test'
import { ORIGIN, addUser, createTestApp } from '../helpers'
import { outbox, signUp } from '../accounts/mail-flows'
import { SAFARI_IPHONE, browse, signInFrom } from './flows'

const MAIL = { SMTP_URL: 'smtp://127.0.0.1:2525', LOGIN_ATTEMPTS_PER_MINUTE: '1000', SIGNUP: 'open' }
const notices = async (t: Awaited<ReturnType<typeof createTestApp>>) => (await outbox(t)).filter((m) => m.subject === 'New sign-in to your account')

describe('"New sign-in to your account" (SPEC "New device")', () => {
  test('a browser new to the account gets a notice with time and zone, address, device and a link to the sessions; the same browser again does not', async () => {
    const t = await createTestApp(MAIL)
    await addUser(t)
    t.clock.advance(9 * 3600_000 + 30 * 60_000)
    const laptop = await signInFrom(t, { address: '198.51.100.4' })
    const [notice, ...more] = await notices(t)
    expect(more).toEqual([])
    expect(notice!.to).toBe('ann@example.com')
    expect(notice!.text).toContain('When: 2026-01-01 09:30:00 UTC')
    expect(notice!.text).toContain('Address: 198.51.100.4')
    expect(notice!.text).toContain('Device: Chrome on Linux')
    expect(notice!.link).toBe(`${ORIGIN}/account#sessions`)
    expect(notice!.html).toContain(`<a href="${ORIGIN}/account#sessions">Where you&#x27;re signed in</a>`)

    // The same browser signs out and in again (its device cookie kept): nothing new.
    await browse(t, '/logout', laptop, { body: { csrf_token: 'x' } })
    await signInFrom(t, { jar: laptop })
    await signInFrom(t, { jar: laptop })
    expect(await notices(t)).toHaveLength(1)
    // Another browser is new.
    await signInFrom(t, { ua: SAFARI_IPHONE, address: '203.0.113.9' })
    const second = (await notices(t))[1]!
    expect(second.text).toContain('Device: Safari on iPhone')
    expect(second.text).toContain('Address: 203.0.113.9')
  })

  test('"new" is per account: a browser that signed in to one account is new to another', async () => {
    const t = await createTestApp(MAIL)
    await addUser(t)
    await addUser(t, 'bob@example.com', 'Bob')
    const shared = await signInFrom(t)
    await signInFrom(t, { jar: shared, email: 'bob@example.com' })
    await signInFrom(t, { jar: shared, email: 'bob@example.com' })
    expect((await notices(t)).map((m) => m.to)).toEqual(['ann@example.com', 'bob@example.com'])
  })

  test('a sign-up is no "new sign-in"; its browser is remembered for the account', async () => {
    const t = await createTestApp(MAIL)
    const { jar } = await signUp(t, 'cat@example.com')
    expect(await notices(t)).toEqual([])
    await signInFrom(t, { jar, email: 'cat@example.com' })
    expect(await notices(t)).toEqual([])
  })

  test('NEW_DEVICE_EMAIL=off, or no SMTP_URL: no notice (the browsers are still remembered)', async () => {
    for (const env of [{ ...MAIL, NEW_DEVICE_EMAIL: 'off' }, {}]) {
      const t = await createTestApp(env)
      await addUser(t)
      await signInFrom(t)
      await signInFrom(t, { ua: SAFARI_IPHONE })
      expect(await outbox(t)).toEqual([])
      expect((await t.rows('SELECT device_hash FROM user_devices')).length).toBe(2)
    }
  })
})
