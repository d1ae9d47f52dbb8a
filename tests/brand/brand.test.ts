import { beforeAll, describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'
import { createLogger } from '../../src/lib/log'
import { Outbox, smtpTransport } from '../../src/mail/outbox'
import { totpUri } from '../../src/accounts/totp'
import { inviteUser } from '../../src/accounts/email-links'
import { createTestApp } from '../helpers'
import { TestSmtp, subjectOf } from '../mail/smtp'
import { outbox, signUp, SMTP } from '../accounts/mail-flows'
import { contrast, PAIRS, themes } from '../views/tokens'
import { DARK, LIGHT } from '../../src/brand/colors'
import appCss from '../../src/views/app.css' with { type: 'text' }
import { PROXIES, checkWith } from '../authz/flow'
import { GIF, ICO, PNG, WEBP, svg, writeFiles } from './fixtures'

// SPEC "Brand and language" → Brand; issue 36.
const files = writeFiles({
  'logo.png': PNG,
  'logo.webp': WEBP,
  'logo.svg': svg('Acme'),
  'dark.svg': svg('Acme', '#8fb0ff'),
  'favicon.ico': ICO,
  'logo.gif': GIF,
  'big.png': Buffer.concat([PNG, Buffer.alloc(512 * 1024 + 1 - PNG.length)]),
  'just-fits.png': Buffer.concat([PNG, Buffer.alloc(512 * 1024 - PNG.length)]),
  'renamed.png': svg('not a png by its name'),
  'brand.css': 'main { border-width: 2px; }\n',
  'latin1.css': Buffer.from([0x61, 0x7b, 0xe9, 0x7d]),
})

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return { variable: (error as ConfigError).variable, message: (error as Error).message }
  }
  throw new Error('the configuration was accepted')
}

describe('BRAND_* variables, read and checked at start', () => {
  test('each variable, good: the name, logos and favicon by their bytes, the colour, the stylesheet', () => {
    const { brand } = loadConfig({ BRAND_NAME: 'Acme Home', BRAND_LOGO: files['logo.webp']!, BRAND_LOGO_DARK: files['dark.svg']!, BRAND_FAVICON: files['favicon.ico']!, BRAND_COLOR: '#E4572E', BRAND_CSS: files['brand.css']! })
    expect(brand.name).toBe('Acme Home')
    expect([brand.logo?.type, brand.logoDark?.type, brand.favicon?.type, brand.css?.type, brand.color]).toEqual(['image/webp', 'image/svg+xml', 'image/x-icon', 'text/css', '#e4572e'])
    expect(loadConfig({ BRAND_LOGO: files['logo.png']!, BRAND_FAVICON: files['logo.svg']! }).brand).toMatchObject({ logo: { type: 'image/png' }, favicon: { type: 'image/svg+xml' } })
    expect(loadConfig({ BRAND_LOGO: files['just-fits.png']! }).brand.logo!.bytes.length).toBe(512 * 1024)
  })

  test('a logo of another type, a file over 512 KiB, a missing file: start-up refused naming the variable', () => {
    expect(refusal({ BRAND_LOGO: files['logo.gif']! })).toEqual({ variable: 'BRAND_LOGO', message: `BRAND_LOGO: "${files['logo.gif']}" is not a PNG, WebP or SVG file` })
    expect(refusal({ BRAND_LOGO: files['logo.png']!, BRAND_LOGO_DARK: files['big.png']! })).toEqual({ variable: 'BRAND_LOGO_DARK', message: `BRAND_LOGO_DARK: "${files['big.png']}" is 524289 bytes; at most 512 KiB` })
    expect(refusal({ BRAND_LOGO_DARK: files['logo.png']! })).toEqual({ variable: 'BRAND_LOGO_DARK', message: 'BRAND_LOGO_DARK: needs BRAND_LOGO (the logo of the light theme)' })
    expect(refusal({ BRAND_FAVICON: files['logo.webp']! })).toEqual({ variable: 'BRAND_FAVICON', message: `BRAND_FAVICON: "${files['logo.webp']}" is not a PNG, ICO or SVG file` })
    expect(refusal({ BRAND_LOGO: '/nonexistent/logo.png' })).toEqual({ variable: 'BRAND_LOGO', message: 'BRAND_LOGO: cannot read "/nonexistent/logo.png"' })
    expect(refusal({ BRAND_CSS: files['latin1.css']! }).variable).toBe('BRAND_CSS')
    // By its bytes, not its name: an SVG called .png is an SVG.
    expect(loadConfig({ BRAND_LOGO: files['renamed.png']! }).brand.logo!.type).toBe('image/svg+xml')
  })

  test('BRAND_COLOR must be #rrggbb; BRAND_NAME one line without ":"', () => {
    for (const bad of ['red', '#fff', '#12345g', 'e4572e']) expect(refusal({ BRAND_COLOR: bad })).toEqual({ variable: 'BRAND_COLOR', message: `BRAND_COLOR: must be a colour like #1f4fc2, got "${bad}"` })
    expect(refusal({ BRAND_NAME: 'Acme\nBcc: x@evil.example' }).variable).toBe('BRAND_NAME')
    expect(refusal({ BRAND_NAME: 'Acme: Home' }).variable).toBe('BRAND_NAME')
    expect(refusal({ BRAND_NAME: 'x'.repeat(65) }).variable).toBe('BRAND_NAME')
  })

  test('the serve command refuses to start on a bad logo: exit 2, one line naming the variable', () => {
    const r = Bun.spawnSync(['bun', 'src/index.ts', 'serve'], { env: { ...process.env, DATABASE_URL: ':memory:', PORT: '0', BRAND_LOGO: files['logo.gif']! }, stderr: 'pipe', stdout: 'pipe' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr.toString()).toBe(`latchkey: BRAND_LOGO: "${files['logo.gif']}" is not a PNG, WebP or SVG file\n`)
  })
})

describe('BRAND_NAME in mails, their sender and the TOTP issuer', () => {
  test("MAIL_FROM's display name is the brand's when MAIL_FROM has none (quoted where RFC 5322 needs it); a full MAIL_FROM is kept", () => {
    expect(loadConfig({ BRAND_NAME: 'Acme Home' }).mailFrom).toBe('Acme Home <no-reply@localhost>')
    expect(loadConfig({ BRAND_NAME: 'Acme Home', MAIL_FROM: 'hello@acme.example' }).mailFrom).toBe('Acme Home <hello@acme.example>')
    expect(loadConfig({ BRAND_NAME: 'Acme, "Home" Inc.', MAIL_FROM: 'hello@acme.example' }).mailFrom).toBe('"Acme, \\"Home\\" Inc." <hello@acme.example>')
    expect(loadConfig({ BRAND_NAME: 'Acme Home', MAIL_FROM: 'Support <help@acme.example>' }).mailFrom).toBe('Support <help@acme.example>')
    expect(loadConfig({}).mailFrom).toBe('Latchkey <no-reply@localhost>')
  })

  test('a mail carries the brand: the invitation names it in its subject, every message is signed with it (escaped in HTML)', async () => {
    const t = await createTestApp({ ...SMTP, BRAND_NAME: 'Acme <Home> & Co' })
    await signUp(t, 'eve@example.com')
    await inviteUser(t.store, t.config, { email: 'ivy@example.com', fullName: 'Ivy' }, t.clock.now(), true)
    const [verify, invite] = await outbox(t)
    expect(verify!.subject).toBe('Verify your email')
    expect(invite!.subject).toBe("You're invited to Acme <Home> & Co")
    for (const m of [verify!, invite!]) {
      expect(m.text).toEndWith('\n\n— Acme <Home> & Co')
      expect(m.html).toContain('>— Acme &lt;Home&gt; &amp; Co</p>')
      expect(m.html).not.toContain('<Home>')
      expect(m.text).not.toContain('Latchkey')
    }
  })

  test('the sender sends with the brand as From display name', async () => {
    const smtp = await TestSmtp.start()
    try {
      const t = await createTestApp({ BRAND_NAME: 'Acme Home', MAIL_FROM: 'hello@acme.example' })
      const sender = new Outbox(t.store, t.clock, createLogger('error', () => {}), smtpTransport(smtp.url, { ca: smtp.tls.cert }), t.config.mailFrom, [])
      await inviteUser(t.store, t.config, { email: 'ivy@example.com', fullName: 'Ivy' }, t.clock.now(), true)
      expect(await sender.tick()).toBe(1)
      const [got] = await smtp.waitFor(1)
      expect(got!.from).toBe('hello@acme.example')
      expect(got!.raw).toMatch(/^From: Acme Home <hello@acme\.example>\r?$/m)
      expect(subjectOf(got!.raw)).toBe("You're invited to Acme Home")
    } finally {
      await smtp.down()
    }
  })

  test('the TOTP issuer is the brand name (default Latchkey)', async () => {
    const base32 = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'
    const branded = await createTestApp({ BRAND_NAME: 'Acme Home' })
    expect(totpUri(branded.ctx, base32, 'ann@example.com')).toBe(`otpauth://totp/Acme%20Home:ann%40example.com?issuer=Acme%20Home&secret=${base32}&algorithm=SHA1&digits=6&period=30`)
    const plain = await createTestApp()
    expect(totpUri(plain.ctx, base32, 'ann@example.com')).toStartWith('otpauth://totp/Latchkey:ann%40example.com?issuer=Latchkey&')
  })
})

describe('the brand on pages and its files', () => {
  let t: Awaited<ReturnType<typeof createTestApp>>
  beforeAll(async () => {
    t = await createTestApp({ BRAND_NAME: 'Acme "Home" <script>alert(1)</script>', BRAND_LOGO: files['logo.png']!, BRAND_LOGO_DARK: files['dark.svg']!, BRAND_FAVICON: files['logo.svg']!, BRAND_CSS: files['brand.css']! })
  })

  test('a page: the title names the brand, the logo is a <picture> (dark source, alt = the name), favicon and stylesheets linked — all escaped, CSP unchanged', async () => {
    const res = await t.handle('/login')
    const html = await res.text()
    const name = 'Acme &quot;Home&quot; &lt;script&gt;alert(1)&lt;/script&gt;'
    const { logo, logoDark, favicon, css } = t.config.brand
    expect(html).toContain(`<title>Sign in · ${name}</title>`)
    expect(html).toContain(`<link rel="icon" href="/assets/brand/favicon?v=${favicon!.etag}" type="image/svg+xml"/>`)
    expect(html).toMatch(new RegExp(`<link rel="stylesheet" href="/assets/app\\.css\\?v=[\\w-]{16}"/><link rel="stylesheet" href="/assets/brand\\.css\\?v=${css!.etag}"/></head>`))
    expect(html).toContain(
      `<header class="brand"><picture><source srcset="/assets/brand/logo-dark?v=${logoDark!.etag}" media="(prefers-color-scheme: dark)"/><img src="/assets/brand/logo?v=${logo!.etag}" alt="${name}"/></picture></header>`,
    )
    expect(html).not.toContain('<script>alert')
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' https: http: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
  })

  test('no logo: the name shows, escaped; an error page carries the brand too', async () => {
    const plain = await createTestApp({ BRAND_NAME: 'Bob & <Sons>' })
    const html = await (await plain.handle('/nowhere', { headers: { accept: 'text/html' } })).text()
    expect(html).toContain('<title>Page not found · Bob &amp; &lt;Sons&gt;</title>')
    expect(html).toContain('<header class="brand"><p class="brand-name">Bob &amp; &lt;Sons&gt;</p></header>')
    expect(html).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml"/>')
  })

  test('the logos and favicon: their own type, nosniff, an SVG under its own CSP; /favicon.ico answers the brand favicon', async () => {
    const expectImage = async (path: string, type: string, bytes: Uint8Array) => {
      const res = await t.handle(path)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(type)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'")
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(bytes))
    }
    await expectImage('/assets/brand/logo?v=' + t.config.brand.logo!.etag, 'image/png', PNG)
    await expectImage('/assets/brand/logo-dark', 'image/svg+xml', svg('Acme', '#8fb0ff'))
    await expectImage('/assets/brand/favicon', 'image/svg+xml', svg('Acme'))
    await expectImage('/favicon.ico', 'image/svg+xml', svg('Acme'))
    const css = await t.handle('/assets/brand.css')
    expect([css.status, css.headers.get('content-type'), css.headers.get('x-content-type-options'), await css.text()]).toEqual([200, 'text/css; charset=utf-8', 'nosniff', 'main { border-width: 2px; }\n'])
  })

  test("forward-auth's Access denied page (the one page under /api/, answered outside the brand's context) carries the brand", async () => {
    const site = await createTestApp({ ...PROXIES, BRAND_NAME: 'Acme Home' })
    const denied = await checkWith(site, 'https://unknown.example.net/')
    expect(denied.status).toBe(403)
    const html = await denied.text()
    expect(html).toContain('<title>Access denied · Acme Home</title>')
    expect(html).toContain('<p class="brand-name">Acme Home</p>')
  })

  test('an unset file is 404, not an empty answer', async () => {
    const plain = await createTestApp()
    for (const path of ['/assets/brand/logo', '/assets/brand/logo-dark', '/assets/brand/favicon', '/assets/brand.css']) expect((await plain.handle(path)).status).toBe(404)
    expect((await plain.handle('/favicon.ico')).headers.get('content-type')).toBe('image/svg+xml')
  })
})

describe('BRAND_COLOR: the accent of both themes, AA or adjusted with a warn line', () => {
  const served = async (color: string) => {
    const lines: string[] = []
    const t = await createTestApp({ BRAND_COLOR: color }, { log: createLogger('info', (s) => lines.push(s)) })
    const css = await (await t.handle('/assets/app.css')).text()
    return { css, warns: lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn'), tokens: themes(css) }
  }

  test('a colour that reaches 4.5:1 in the light theme is used as it is there; the dark theme gets a lighter shade, and a warn line says so', async () => {
    const { tokens, warns } = await served('#1d4ed8')
    expect(tokens.light['--color-accent']).toBe('#1d4ed8')
    expect(tokens.light['--color-focus']).toBe('#1d4ed8')
    expect(tokens.dark['--color-accent']).not.toBe('#1d4ed8')
    expect(warns).toHaveLength(1)
    expect(warns[0]).toMatchObject({ level: 'warn', variable: 'BRAND_COLOR', theme: 'dark', given: '#1d4ed8', used: tokens.dark['--color-accent'] })
    expect(warns[0].msg).toBe("BRAND_COLOR #1d4ed8 reaches 2.22:1 in the dark theme, under WCAG AA's 4.5:1; that theme uses #6a8ae5 (4.51:1)")
  })

  test('a light colour (yellow) is darkened for the light theme and kept for the dark one', async () => {
    const { tokens, warns } = await served('#ffd23f')
    expect(tokens.dark['--color-accent']).toBe('#ffd23f')
    expect(tokens.light['--color-accent']).not.toBe('#ffd23f')
    expect(warns.map((w) => w.theme)).toEqual(['light'])
  })

  for (const color of ['#1d4ed8', '#ffd23f', '#e4572e', '#00ff00', '#000000', '#ffffff', '#767676'])
    test(`${color}: every token pair of app.css reaches its WCAG AA ratio in both themes`, async () => {
      const { tokens } = await served(color)
      for (const theme of ['light', 'dark'] as const) {
        const failures = PAIRS.map(([fg, bg, min, where]) => ({ where, min, ratio: contrast(tokens[theme][fg]!, tokens[theme][bg]!) })).filter((p) => !(p.ratio >= p.min))
        expect({ theme, failures }).toEqual({ theme, failures: [] })
      }
    })

  test("the colours src/brand/colors.ts draws the accent on are app.css's own", () => {
    const base = themes(appCss)
    for (const [theme, t] of [['light', LIGHT], ['dark', DARK]] as const) {
      const tk = base[theme]
      expect({ theme, backgrounds: t.backgrounds, onAccent: t.onAccent }).toEqual({ theme, backgrounds: [tk['--color-surface']!, tk['--color-bg']!, tk['--color-notice-bg']!], onAccent: tk['--color-on-accent']! })
    }
  })

  test('no BRAND_COLOR: app.css is served as it is, no warn', async () => {
    const { css, warns } = await served('')
    expect(css).toBe(appCss)
    expect(warns).toEqual([])
  })
})
