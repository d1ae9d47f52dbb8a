/**
 * A real SMTP server for tests (`smtp-server`, nodemailer's twin), on a loopback port, with
 * STARTTLS on a self-signed certificate made for the test by openssl. It keeps every message it
 * accepted; `down()`/`up()` take it away and bring it back on the same port.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SMTPServer } from 'smtp-server'

export interface Received {
  from: string
  to: string[]
  raw: string
  /** Whether the connection was upgraded to TLS (STARTTLS) before the message. */
  secure: boolean
}

/** A self-signed certificate for localhost and 127.0.0.1. */
export function selfSignedCertificate(): { key: string; cert: string; certPath: string } {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-tls-'))
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  const r = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'])
  if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`)
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8'), certPath: cert }
}

export class TestSmtp {
  readonly received: Received[] = []
  private server: SMTPServer | undefined
  private waiters: Array<() => void> = []
  readonly tls = selfSignedCertificate()

  private constructor(public port: number, private readonly opts: { starttls: boolean }) {}

  static async start(opts: { starttls?: boolean } = {}): Promise<TestSmtp> {
    const smtp = new TestSmtp(0, { starttls: opts.starttls ?? true })
    await smtp.up()
    return smtp
  }

  get url(): string {
    return `smtp://mailer:s3cret-pass@127.0.0.1:${this.port}`
  }

  async up(): Promise<void> {
    const server = new SMTPServer({
      secure: false,
      key: this.tls.key,
      cert: this.tls.cert,
      hideSTARTTLS: !this.opts.starttls,
      authOptional: true,
      onAuth: (auth, _session, callback) => (auth.username === 'mailer' && auth.password === 's3cret-pass' ? callback(null, { user: 'mailer' }) : callback(new Error('bad credentials'))),
      onData: (stream, session, callback) => {
        let raw = ''
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString()))
        stream.on('end', () => {
          this.received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw, secure: session.secure })
          for (const wake of this.waiters.splice(0)) wake()
          callback()
        })
      },
      logger: false,
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.server.address() as { port: number }).port
    this.server = server
  }

  async down(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /** SMTP sessions open now: none means no message is being sent to this server. */
  get openConnections(): number {
    return (this.server as unknown as { connections?: Set<unknown> } | undefined)?.connections?.size ?? 0
  }

  /** Waits until `count` messages have arrived (or throws after `ms`). */
  async waitFor(count: number, ms = 15_000): Promise<Received[]> {
    const deadline = Date.now() + ms
    while (this.received.length < count) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`expected ${count} messages, got ${this.received.length}`)
      await Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), Bun.sleep(Math.min(left, 500))])
    }
    return this.received
  }
}

/** The first link of a message's text part (quoted-printable soft breaks undone); '' when it has none. */
export function linkIn(raw: string): string {
  const text = raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=')
  return /https?:\/\/[^\s"<>]+/.exec(text)?.[0] ?? ''
}

export const subjectOf = (raw: string) => /^Subject: (.*)$/m.exec(raw)?.[1]?.trim()
