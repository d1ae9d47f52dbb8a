/**
 * A software WebAuthn authenticator for in-process tests (WebAuthn Level 2 §6): an ES256 key,
 * "none" attestation, and assertions signed over authenticatorData ‖ SHA-256(clientDataJSON).
 * Unlike a browser it will happily answer for the wrong origin or RP ID, replay a challenge or
 * send its counter backwards: exactly what the negative tests need.
 */

type CborValue = number | string | Uint8Array | CborMap | { [key: string]: CborValue }
interface CborMap extends Map<number | string, CborValue> {}

/** The few CBOR (RFC 8949) items WebAuthn needs: integers, byte and text strings, maps. */
function cbor(value: CborValue): Uint8Array {
  const head = (major: number, n: number): number[] => {
    if (n < 24) return [(major << 5) | n]
    if (n < 256) return [(major << 5) | 24, n]
    if (n < 65536) return [(major << 5) | 25, n >> 8, n & 255]
    return [(major << 5) | 26, (n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255]
  }
  if (typeof value === 'number') return new Uint8Array(value >= 0 ? head(0, value) : head(1, -1 - value))
  if (typeof value === 'string') {
    const bytes = new TextEncoder().encode(value)
    return concat(new Uint8Array(head(3, bytes.length)), bytes)
  }
  if (value instanceof Uint8Array) return concat(new Uint8Array(head(2, value.length)), value)
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value)
  return concat(new Uint8Array(head(5, entries.length)), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)]))
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const b64url = (bytes: Uint8Array | ArrayBuffer) => Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes).toString('base64url')
const sha256 = async (data: Uint8Array<ArrayBuffer>) => new Uint8Array(await crypto.subtle.digest('SHA-256', data))
const u32 = (n: number) => new Uint8Array([(n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255])

/** WebCrypto's ECDSA signature is r‖s; WebAuthn wants ASN.1 DER (§6.5.6). */
function derSignature(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0
    while (i < b.length - 1 && b[i] === 0) i++
    let v: Uint8Array = b.slice(i)
    if (v[0]! & 0x80) v = concat(new Uint8Array([0]), v)
    return concat(new Uint8Array([0x02, v.length]), v)
  }
  const body = concat(int(raw.slice(0, 32)), int(raw.slice(32)))
  return concat(new Uint8Array([0x30, body.length]), body)
}

const FLAG_UP = 0x01
const FLAG_UV = 0x04
const FLAG_AT = 0x40

export interface Ceremony {
  /** What the browser would put in clientDataJSON: the page's origin. */
  origin: string
  /** The RP ID whose hash goes in authenticatorData. */
  rpId: string
  /** User verification (fingerprint, PIN) done: the UV flag. */
  uv?: boolean
}

export class SoftAuthenticator {
  counter = 0
  private userHandle = ''

  private constructor(
    readonly credentialId: Uint8Array,
    private readonly keys: CryptoKeyPair,
  ) {}

  static async create(): Promise<SoftAuthenticator> {
    const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair
    return new SoftAuthenticator(crypto.getRandomValues(new Uint8Array(16)), keys)
  }

  /** The credential id, base64url. */
  get id(): string {
    return b64url(this.credentialId)
  }

  private async authData(rpId: string, flags: number, attested?: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
    return concat(await sha256(new TextEncoder().encode(rpId)), new Uint8Array([flags]), u32(this.counter), attested ?? new Uint8Array())
  }

  private clientData(type: string, challenge: string, origin: string): Uint8Array<ArrayBuffer> {
    return new TextEncoder().encode(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
  }

  /** navigator.credentials.create: the RegistrationResponseJSON a browser would send. */
  async register(options: { challenge: string; user: { id: string } }, c: Ceremony) {
    this.userHandle = options.user.id
    const jwk = await crypto.subtle.exportKey('jwk', this.keys.publicKey)
    const coseKey = new Map<number, CborValue>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ])
    const attested = concat(new Uint8Array(16), new Uint8Array([this.credentialId.length >> 8, this.credentialId.length & 255]), this.credentialId, cbor(coseKey))
    const authData = await this.authData(c.rpId, FLAG_UP | FLAG_AT | (c.uv === false ? 0 : FLAG_UV), attested)
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData })
    return this.credential({
      clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, c.origin)),
      attestationObject: b64url(attestationObject),
      transports: ['internal'],
    })
  }

  /** navigator.credentials.get: the AuthenticationResponseJSON, counting up unless told which counter to send. */
  async assert(options: { challenge: string }, c: Ceremony & { counter?: number }) {
    this.counter = c.counter ?? this.counter + 1
    const authData = await this.authData(c.rpId, FLAG_UP | (c.uv === false ? 0 : FLAG_UV))
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, c.origin)
    const signed = concat(authData, await sha256(clientDataJSON))
    const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, this.keys.privateKey, signed))
    return this.credential({
      clientDataJSON: b64url(clientDataJSON),
      authenticatorData: b64url(authData),
      signature: b64url(derSignature(raw)),
      userHandle: this.userHandle,
    })
  }

  /** The PublicKeyCredential JSON around an authenticator response. */
  private credential<R>(response: R) {
    return { id: this.id, rawId: this.id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform', response }
  }
}
