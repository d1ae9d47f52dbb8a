import type { AppContext } from '../context'
import type { NewToken } from '../db/store'
import { signJwt, verifyJwt, type JwsKey } from '../oidc/jwt'

/**
 * RFC 9068 JWT access tokens, for resources registered with `--token-format jwt`: the resource
 * checks them offline against the JWKS. Each names its stored row, so revocation, userinfo and
 * introspection treat it as the opaque token it stands for.
 */

const seconds = (ms: number) => Math.floor(ms / 1000)
const JTI = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})$/

/**
 * The `jti`: the row's id (base 36) and the start of its verifier's hash — never the verifier,
 * which would make the jti a bearer token. The hash part tells a row whose id was reused after
 * a deletion from the one the token named.
 */
const jtiOf = (id: number, verifierHash: string) => `${id.toString(36)}.${verifierHash.slice(0, 22)}`

/** `row.userId` null: a client's own token, whose subject is the client (RFC 9068 §2.2). */
export async function jwtAccessToken(ctx: AppContext, row: Omit<NewToken, 'userId' | 'familyId'> & { userId: string | null }, audience: string, id: number): Promise<string> {
  const signer = await ctx.signingKeys.signingKey()
  const payload = {
    iss: ctx.config.issuer,
    sub: row.userId ?? row.clientId,
    aud: audience,
    client_id: row.clientId,
    scope: row.scope,
    exp: seconds(row.expiresAt),
    iat: seconds(row.createdAt),
    jti: jtiOf(id, row.verifierHash),
  }
  return signJwt(payload, signer, 'at+jwt')
}

/** What a token that looks like a JWT claims to be (unverified): its row id and hash prefix, for the cache lookup. */
export function claimedRow(token: string): { id: number; hashPrefix: string } | undefined {
  const first = token.indexOf('.')
  const second = token.indexOf('.', first + 1)
  if (first < 0 || second < 0 || token.length > 8192) return undefined
  try {
    const payload = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString()) as { jti?: unknown }
    const match = typeof payload?.jti === 'string' ? JTI.exec(payload.jti) : null
    return match ? { id: parseInt(match[1]!, 36), hashPrefix: match[2]! } : undefined
  } catch {
    return undefined
  }
}

/** The row a JWT access token names, once its signature (a published key), typ, issuer and jti check out; its expiry is the row's. */
export async function verifiedRow(
  token: string,
  issuer: string,
  keys: () => Promise<(kid: string) => JwsKey | undefined>,
): Promise<{ id: number; hashPrefix: string } | undefined> {
  const claimed = claimedRow(token)
  if (!claimed) return undefined
  const verified = await verifyJwt(token, await keys())
  if (!verified || verified.header.typ !== 'at+jwt' || verified.payload.iss !== issuer) return undefined
  return claimed
}

export const looksLikeJwt = (token: string) => token.startsWith('eyJ')
