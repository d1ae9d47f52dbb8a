import { describe, expect, test } from 'bun:test'
import { addUser, createTestApp, csrfFrom } from '../helpers'
import { CHROME_LINUX, SAFARI_IPHONE, browse, signInFrom, signedIn } from './flows'

async function twoBrowsers() {
  const t = await createTestApp()
  await addUser(t)
  const laptop = await signInFrom(t, { ua: CHROME_LINUX, address: '198.51.100.4' })
  t.clock.advance(3 * 60_000)
  const phone = await signInFrom(t, { ua: SAFARI_IPHONE, address: '203.0.113.9' })
  return { t, laptop, phone }
}

const handles = (html: string) => [...html.matchAll(/name="session" value="([^"]+)"/g)].map((m) => m[1]!)

describe('/account → "Where you\'re signed in" (SPEC "Sessions")', () => {
  test('lists each session with its browser and system, address, times and "This device"; no session token in the page', async () => {
    const { t, laptop, phone } = await twoBrowsers()
    const res = await browse(t, '/account', laptop, { ua: CHROME_LINUX })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain("<h2>Where you're signed in</h2>")
    const section = html.slice(html.indexOf('id="sessions"'))
    // This device first, then the phone.
    expect(section.indexOf('Chrome on Linux')).toBeLessThan(section.indexOf('Safari on iPhone'))
    expect(section).toContain('<strong>Chrome on Linux</strong><span class="badge"> This device</span>')
    expect(section).toContain('198.51.100.4')
    expect(section).toContain('203.0.113.9')
    expect(section).toContain('Signed in <time datetime="2026-01-01T00:00:00.000Z">2026-01-01 00:00 UTC</time>')
    expect(section).toContain('Signed in <time datetime="2026-01-01T00:03:00.000Z">2026-01-01 00:03 UTC</time>')
    expect(section).toContain('>Sign out everywhere else</button>')
    expect(handles(html)).toHaveLength(2)
    // The handles are the sessions' public ids, never the cookies' tokens (nor anything derived from them).
    const sids = (await t.rows('SELECT sid FROM sessions')).map((r) => r.sid)
    expect(handles(html).sort()).toEqual((sids as string[]).sort())
    for (const jar of [laptop, phone]) expect(html).not.toContain(jar.lk_session!)
  })

  test('"Sign out" ends one of the user\'s sessions: the other browser is signed out at its next request', async () => {
    const { t, laptop, phone } = await twoBrowsers()
    const html = await (await browse(t, '/account', laptop)).text()
    const [, phoneHandle] = handles(html)
    // Without the CSRF token: 403, nothing ends.
    expect((await browse(t, '/account/sessions/sign-out', laptop, { body: { session: phoneHandle! } })).status).toBe(403)
    expect(await signedIn(t, phone)).toBe(true)
    const res = await browse(t, '/account/sessions/sign-out', laptop, { body: { csrf_token: csrfFrom(html), session: phoneHandle! } })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account#sessions')
    expect(await signedIn(t, phone)).toBe(false)
    expect(await signedIn(t, laptop)).toBe(true)
  })

  test("another user's session (or an unknown one) is 404 and changes nothing", async () => {
    const { t, laptop, phone } = await twoBrowsers()
    await addUser(t, 'bob@example.com', 'Bob')
    const bob = await signInFrom(t, { email: 'bob@example.com' })
    const bobHandle = handles(await (await browse(t, '/account', bob)).text())[0]!
    const html = await (await browse(t, '/account', laptop)).text()
    for (const handle of [bobHandle, 'nope', '']) {
      const res = await browse(t, '/account/sessions/sign-out', laptop, { body: { csrf_token: csrfFrom(html), session: handle } })
      expect(res.status).toBe(404)
      expect(await res.text()).toContain('There is no such session.')
    }
    expect([await signedIn(t, bob), await signedIn(t, laptop), await signedIn(t, phone)]).toEqual([true, true, true])
  })

  test('"Sign out everywhere else" ends every session of the user but this one', async () => {
    const { t, laptop, phone } = await twoBrowsers()
    const third = await signInFrom(t, { ua: SAFARI_IPHONE })
    await addUser(t, 'bob@example.com', 'Bob')
    const bob = await signInFrom(t, { email: 'bob@example.com' })
    const html = await (await browse(t, '/account', laptop)).text()
    expect((await browse(t, '/account/sessions/sign-out-others', laptop, { body: {} })).status).toBe(403)
    const res = await browse(t, '/account/sessions/sign-out-others', laptop, { body: { csrf_token: csrfFrom(html) } })
    expect(res.status).toBe(303)
    expect([await signedIn(t, laptop), await signedIn(t, phone), await signedIn(t, third), await signedIn(t, bob)]).toEqual([true, false, false, true])
    const after = await (await browse(t, '/account', laptop)).text()
    expect(handles(after)).toHaveLength(1)
    expect(after).not.toContain('>Sign out everywhere else</button>')
  })

  test('"Sign out" on this device signs this browser out', async () => {
    const { t, laptop, phone } = await twoBrowsers()
    const html = await (await browse(t, '/account', laptop)).text()
    const res = await browse(t, '/account/sessions/sign-out', laptop, { body: { csrf_token: csrfFrom(html), session: handles(html)[0]! } })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login')
    expect([await signedIn(t, laptop), await signedIn(t, phone)]).toEqual([false, true])
  })
})
