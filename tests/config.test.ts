import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig, redactDatabaseText, redactUrl } from '../src/config'

describe('configuration', () => {
  test('SIGNUP: closed, open, or domain:… (open to verified addresses at those domains: needs mail, makes verification required)', () => {
    expect(loadConfig({ SIGNUP: 'open' })).toMatchObject({ signup: 'open', signupDomains: [], emailVerification: 'optional' })
    expect(loadConfig({ SIGNUP: 'domain:Example.com, example.org', SMTP_URL: 'smtp://mail.example.com:25' })).toMatchObject({ signup: 'open', signupDomains: ['example.com', 'example.org'], emailVerification: 'required' })
    const refused: Array<[Record<string, string>, string]> = [
      [{ SIGNUP: 'domain:example.com' }, 'SIGNUP: domain:… signs up verified addresses only: it needs SMTP_URL (the links are sent by mail)'],
      [{ SIGNUP: 'domain:example.com', SMTP_URL: 'smtp://m.example:25', EMAIL_VERIFICATION: 'optional' }, 'SIGNUP: domain:… signs up verified addresses only: EMAIL_VERIFICATION=optional contradicts it'],
      [{ SIGNUP: 'domain:', SMTP_URL: 'smtp://m.example:25' }, 'SIGNUP: domain: needs one or more domains, like domain:example.com,example.org'],
      [{ SIGNUP: 'domain:exa mple.com', SMTP_URL: 'smtp://m.example:25' }, 'SIGNUP: "exa mple.com" is not a domain name'],
      [{ SIGNUP: 'everyone' }, 'SIGNUP: must be closed, open or domain:DOMAIN[,DOMAIN…], got "everyone"'],
    ]
    for (const [env, message] of refused) expect(() => loadConfig(env)).toThrow(message)
  })

  test('defaults per SPEC', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: './data/latchkey.sqlite',
      databasePoolSize: 10,
      issuer: 'http://localhost:3000',
      signup: 'closed',
      signupDomains: [],
      codeTtl: 60,
      accessTokenTtl: 3600,
      refreshTokenTtl: 2_592_000,
      refreshTokenReuseGrace: 10,
      tokenCacheSize: 100_000,
      settingsCacheSize: 16_777_216,
      settingsMaxValueBytes: 65536,
      settingsMaxKeys: 1000,
      settingsMaxUserBytes: 16_777_216,
      loginAttemptsPerMinute: 10,
      trustedProxies: [],
      logLevel: 'info',
      secureCookies: false,
      passkeys: { rpId: 'localhost', origin: 'http://localhost:3000' },
      smtpUrl: null,
      mailFrom: 'Latchkey <no-reply@localhost>',
      emailVerification: 'optional',
      clientIdMetadataDocuments: true,
      clientIdMetadataAllowHosts: [],
      dynamicRegistration: 'off',
      settingsChangesDays: 30,
      settingsStreamsMax: 10_000,
      metricsAddress: null,
      auditDays: 90,
      sessionTtl: 2_592_000,
      sessionIdleTtl: 604_800,
      newDeviceEmail: true,
      backchannelLogoutRetry: 30,
      brand: { name: 'Latchkey', logo: null, logoDark: null, favicon: null, color: null, css: null },
      defaultLocale: 'en',
    })
  })

  test('SESSION_TTL, SESSION_IDLE_TTL and NEW_DEVICE_EMAIL are validated', () => {
    const c = loadConfig({ SESSION_TTL: '3600', SESSION_IDLE_TTL: '600', NEW_DEVICE_EMAIL: 'off' })
    expect([c.sessionTtl, c.sessionIdleTtl, c.newDeviceEmail]).toEqual([3600, 600, false])
    expect(() => loadConfig({ SESSION_TTL: '59' })).toThrow('SESSION_TTL: must be between 60 and 31536000, got 59')
    expect(() => loadConfig({ SESSION_IDLE_TTL: '1h' })).toThrow('SESSION_IDLE_TTL: must be a whole number, got "1h"')
    expect(() => loadConfig({ NEW_DEVICE_EMAIL: 'no' })).toThrow('NEW_DEVICE_EMAIL')
  })

  test('METRICS_ADDRESS is host:port; empty is off', () => {
    expect(loadConfig({ METRICS_ADDRESS: '127.0.0.1:9464' }).metricsAddress).toEqual({ host: '127.0.0.1', port: 9464 })
    expect(loadConfig({ METRICS_ADDRESS: '[::1]:9464' }).metricsAddress).toEqual({ host: '::1', port: 9464 })
    for (const bad of ['9464', 'localhost', 'http://x:1', 'x:0', 'x:70000']) expect(() => loadConfig({ METRICS_ADDRESS: bad })).toThrow('METRICS_ADDRESS: must be host:port')
  })

  test('agents: CLIENT_ID_METADATA_DOCUMENTS on|off, CLIENT_ID_METADATA_ALLOW_HOSTS a comma list of hosts, DYNAMIC_REGISTRATION off|open|token', () => {
    expect(loadConfig({ CLIENT_ID_METADATA_DOCUMENTS: 'off' }).clientIdMetadataDocuments).toBe(false)
    expect(() => loadConfig({ CLIENT_ID_METADATA_DOCUMENTS: 'yes' })).toThrow('CLIENT_ID_METADATA_DOCUMENTS')
    expect(loadConfig({ CLIENT_ID_METADATA_ALLOW_HOSTS: ' Localhost:8443, intranet.lan,[::1]' }).clientIdMetadataAllowHosts).toEqual(['localhost:8443', 'intranet.lan', '[::1]'])
    expect(() => loadConfig({ CLIENT_ID_METADATA_ALLOW_HOSTS: 'https://x.example' })).toThrow('CLIENT_ID_METADATA_ALLOW_HOSTS: "https://x.example" is not a host name')
    expect(loadConfig({ DYNAMIC_REGISTRATION: 'token' }).dynamicRegistration).toBe('token')
    expect(() => loadConfig({ DYNAMIC_REGISTRATION: 'on' })).toThrow('DYNAMIC_REGISTRATION')
  })

  test('mail: SMTP_URL smtp:// or smtps://, MAIL_FROM on one line, EMAIL_VERIFICATION=required only with SMTP', () => {
    expect(loadConfig({ SMTP_URL: 'smtps://u:p@mail.example:465', ISSUER: 'https://id.example.com' })).toMatchObject({
      smtpUrl: 'smtps://u:p@mail.example:465',
      mailFrom: 'Latchkey <no-reply@id.example.com>',
    })
    expect(() => loadConfig({ SMTP_URL: 'http://u:secret@mail.example' })).toThrow('SMTP_URL: must be smtp://user:pass@host:port or smtps://…, got "http://u:***@mail.example/"')
    expect(() => loadConfig({ MAIL_FROM: 'a@b.c\r\nBcc: x@y.z' })).toThrow('MAIL_FROM')
    expect(() => loadConfig({ EMAIL_VERIFICATION: 'required' })).toThrow('EMAIL_VERIFICATION: required needs SMTP_URL')
    expect(loadConfig({ EMAIL_VERIFICATION: 'required', SMTP_URL: 'smtp://localhost:25' }).emailVerification).toBe('required')
  })

  test('passkeys follow ISSUER: its host is the RP ID, an IP address turns them off', () => {
    expect(loadConfig({ ISSUER: 'https://id.example.com' }).passkeys).toEqual({ rpId: 'id.example.com', origin: 'https://id.example.com' })
    expect(loadConfig({ ISSUER: 'https://id.example.com:8443' }).passkeys).toEqual({ rpId: 'id.example.com', origin: 'https://id.example.com:8443' })
    expect(loadConfig({ ISSUER: 'http://127.0.0.1:3000' }).passkeys).toBeNull()
    expect(loadConfig({ ISSUER: 'http://[::1]:3000' }).passkeys).toBeNull()
  })

  test('an empty variable means its default', () => {
    expect(loadConfig({ SETTINGS_MAX_KEYS: '', PORT: '' }).settingsMaxKeys).toBe(1000)
  })

  test('ISSUER follows PORT by default; https turns on Secure cookies; a trailing slash is dropped', () => {
    expect(loadConfig({ PORT: '8080' }).issuer).toBe('http://localhost:8080')
    const c = loadConfig({ ISSUER: 'https://id.example.com/' })
    expect(c.issuer).toBe('https://id.example.com')
    expect(c.secureCookies).toBe(true)
  })

  for (const [name, value] of [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ISSUER', 'not a url'],
    ['ISSUER', 'https://id.example/?q=1'],
    ['SIGNUP', 'maybe'],
    ['CODE_TTL', '-1'],
    ['ACCESS_TOKEN_TTL', '0'],
    ['SETTINGS_MAX_VALUE_BYTES', '1.5'],
    ['SETTINGS_MAX_KEYS', '1e3'],
    ['LOG_LEVEL', 'verbose'],
    ['SETTINGS_MAX_USER_BYTES', '0'],
    ['LOGIN_ATTEMPTS_PER_MINUTE', 'ten'],
    ['LOGIN_ATTEMPTS_PER_MINUTE', '0'],
    ['TRUSTED_PROXIES', '10.0.0.0/33'],
    ['TRUSTED_PROXIES', 'proxy.example'],
    ['TRUSTED_PROXIES', '10.0.0.1, fe80::1/129'],
    ['DATABASE_URL', 'mysql://db/latchkey'],
    ['DATABASE_POOL_SIZE', '0'],
    ['REFRESH_TOKEN_TTL', '30'],
    ['REFRESH_TOKEN_REUSE_GRACE', '-1'],
    ['TOKEN_CACHE_SIZE', 'lots'],
    ['SETTINGS_CACHE_SIZE', '16M'],
    ['SETTINGS_CACHE_SIZE', '-1'],
  ] as const) {
    test(`${name}=${JSON.stringify(value)} is refused with a message naming the variable`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `))
    })
  }

  test('redactUrl never shows a password: user-info (a raw @ in it too), ?password=, ?sslpassword=', () => {
    const cases: Array<[string, string]> = [
      ['postgres://ann:s3cret@db:5432/latchkey', 's3cret'],
      ['postgres://ann:p@ss@w0rd@db/latchkey', 'w0rd'],
      ['postgresql://ann@db/latchkey?password=s3cret&sslmode=require', 's3cret'],
      ['postgres://db/latchkey?sslpassword=k3y&user=ann', 'k3y'],
      ['postgres://ann:p%40ss@db/latchkey', 'p%40ss'],
    ]
    for (const [url, secret] of cases) {
      expect(redactUrl(url)).not.toContain(secret)
      expect(redactUrl(url)).toContain('db')
    }
    expect(redactUrl('postgresql://ann@db/latchkey?password=s3cret&sslmode=require')).toBe('postgresql://ann@db/latchkey?password=***&sslmode=require')
    expect(redactUrl('./data/latchkey.sqlite')).toBe('./data/latchkey.sqlite')
    expect(redactDatabaseText('connect to postgres://ann:s3cret@db/x failed (s3cret)', 'postgres://ann:s3cret@db/x')).not.toContain('s3cret')
  })
})
