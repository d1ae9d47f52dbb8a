import type { AppContext } from '../../../context'
import { sha256 } from '../../../lib/crypto'
import { AuthorizationPending, ExpiredToken, InvalidGrant, PollAccessDenied, SlowDown } from '../../../lib/errors'
import { decidePoll, intervalOf, pollAnswer, type LastPoll } from '../../../db/store'
import { jsonText } from '../../../lib/http'
import { DEVICE_CODE, isPublic, peekClient, type Client } from '../../clients'
import { DEVICE_REDIRECT } from '../../device/pages'
import { mintForCode, withIdToken } from '../issue'
import type { TokenRequest, TokenResponse } from '../model'

export const grantType = DEVICE_CODE
export const parameters = ['device_code'] as const

/** Polls (and poll bodies) remembered per instance; past this many all are forgotten (their next polls read the database's; cheaper than evicting one by one). */
const REMEMBERED_POLLS = 20_000
/** A body longer than this is no plain poll (~160 bytes): it is never looked up by its hash. */
const PLAIN_POLL_MAX_BYTES = 512

interface PollMemory {
  /** Each device code's last poll here, by the code's hash. */
  polls: Map<string, LastPoll>
  /** Plain polls' bodies answered from memory, by the body's SHA-256: what they named. */
  bodies: Map<string, { deviceCodeHash: string; clientId: string }>
}
const memories = new WeakMap<AppContext, PollMemory>()

/**
 * This instance's memory of each device code's last poll. A poll that finds nothing writes
 * nothing (it costs a read, as a userinfo does): its time is kept here. slow_down, a decision
 * and its use are written. Across instances a device that alternates between them is told to
 * slow down by each one it polls too fast (and the longer interval is in the database); only a
 * device polling between once and twice per interval, spread over two instances, may go untold.
 */
function memoryOf(ctx: AppContext): PollMemory {
  let memory = memories.get(ctx)
  if (!memory) memories.set(ctx, (memory = { polls: new Map(), bodies: new Map() }))
  return memory
}

/** `seen`: what polls held for the code, if anything (it is updated in place). */
function remember(polls: Map<string, LastPoll>, hash: string, at: number, interval: number, seen = polls.get(hash)) {
  if (seen) {
    seen.at = at
    seen.interval = interval
    return
  }
  if (polls.size >= REMEMBERED_POLLS) polls.clear()
  polls.set(hash, { at, interval })
}

/**
 * The answers of a poll that finds nothing, made once: they never vary, and an Error made per
 * poll captured a stack each time (~4 µs of a served poll's CPU; issue 38 "Speed"). Frozen, as
 * every poll shares them.
 */
const PENDING = Object.freeze(new AuthorizationPending('the user has not finished yet'))
/** errorResponse(PENDING)'s body, serialized once for the polls answered from memory. */
const PENDING_BODY = JSON.stringify({ error: PENDING.error, error_description: PENDING.description })
const SLOW_DOWN = Object.freeze(new SlowDown('polling too fast: wait 5 seconds more between polls'))
const EXPIRED = Object.freeze(new ExpiredToken('the device code has expired; start again'))

/**
 * The key a poll's body is remembered by (its SHA-256), or undefined for a body too long to be a
 * plain poll: a device repeats its poll byte for byte every interval, so the second and later
 * ones need not be parsed (pendingFromBody).
 */
export function pollBodyKey(bytes: Uint8Array): string | undefined {
  return bytes.length <= PLAIN_POLL_MAX_BYTES ? (Bun.SHA256.hash(bytes, 'base64url') as unknown as string) : undefined
}

/**
 * A poll that finds nothing, answered from memory with no await (the token endpoint's fast path,
 * ../fast-path.ts): issue 38 wants it to cost no more than a userinfo, and the async steps of the
 * full path — client authentication, the grant, the row's read — were half of what was left once
 * the row was cached. Only the plainest poll, and only when all it needs is held: a public
 * client naming itself (RFC 6749 §2.3, method "none": no Authorization header, no secret, no
 * assertion, no other parameter) that this instance holds and may use the grant, and a pending
 * device code it holds (src/db/device-cache.ts) for which the rules say authorization_pending.
 * Anything else — slow_down, a decision, an unknown code or client — is undefined: the full
 * path (handler) answers it, with the same rules (tests/oauth/device-poll-fast-path.test.ts
 * compares both). The body of a poll so answered is remembered by `bodyKey` (pollBodyKey).
 */
export function pendingFromMemory(ctx: AppContext, request: Request, params: Record<string, unknown>, bodyKey?: string): Response | undefined {
  const { device_code: deviceCode, client_id: clientId } = params
  if (typeof deviceCode !== 'string' || typeof clientId !== 'string' || Object.keys(params).length !== 3 || request.headers.get('authorization') !== null) return undefined
  const hash = sha256(deviceCode)
  const memory = memoryOf(ctx)
  const answer = pendingFor(ctx, memory, clientId, hash)
  if (answer && bodyKey !== undefined) {
    const { bodies } = memory
    if (bodies.size >= REMEMBERED_POLLS) bodies.clear()
    bodies.set(bodyKey, { deviceCodeHash: hash, clientId })
  }
  return answer
}

/**
 * pendingFromMemory for a body it answered before, byte for byte (by pollBodyKey): the same
 * parameters, so the same checks but the parse, and the same answer. Undefined: parse it.
 */
export function pendingFromBody(ctx: AppContext, request: Request, bodyKey: string): Response | undefined {
  const memory = memoryOf(ctx)
  const known = memory.bodies.get(bodyKey)
  if (!known || request.headers.get('authorization') !== null) return undefined
  return pendingFor(ctx, memory, known.clientId, known.deviceCodeHash)
}

/** The poll's answer if memory holds the public client and the pending code, and the rules say authorization_pending; its time remembered. */
function pendingFor(ctx: AppContext, { polls }: PollMemory, clientId: string, hash: string): Response | undefined {
  const client = peekClient(ctx.store, clientId)
  if (!client || !isPublic(client) || !client.grantTypes.includes(DEVICE_CODE)) return undefined
  const row = ctx.store.devices.peekDeviceCode(hash)
  if (!row) return undefined
  const now = ctx.clock.now()
  const seen = polls.get(hash)
  if (pollAnswer(row, client.id, now, seen) !== 'authorization_pending') return undefined
  remember(polls, hash, now, intervalOf(row, seen), seen)
  return jsonText(PENDING_BODY, PENDING.status)
}

/**
 * RFC 8628 §3.4–3.5: a poll. The row is read, the last poll taken from it or from this
 * instance's memory (whichever is later), and the answer decided with no await between the
 * decision and the memory (two polls at once on this instance: the second is slow_down). Once
 * the user allowed, the one poll that uses the request up (one UPDATE, on any instance)
 * exchanges the code issued then — as an authorization code exchange: a refresh token, an
 * id_token with openid.
 */
export async function handler(ctx: AppContext, client: Client, body: TokenRequest, request?: Request): Promise<TokenResponse> {
  const hash = sha256(body.device_code as string)
  const row = await ctx.store.devices.findDeviceCode(hash)
  const now = ctx.clock.now()
  const { polls } = memoryOf(ctx)
  const { outcome, update } = decidePoll(row, client.id, now, polls.get(hash))
  if (update) remember(polls, hash, now, update.interval)
  switch (outcome.answer) {
    case 'authorization_pending':
      throw PENDING
    case 'slow_down':
      await ctx.store.devices.slowDown(hash, now, update!.interval)
      throw SLOW_DOWN
    case 'expired_token':
      throw EXPIRED
    case 'invalid_grant':
      throw new InvalidGrant('device code is invalid or was used already')
  }
  const finished = await ctx.store.devices.finishDeviceCode(hash, client.id, now, outcome.answer === 'access_denied' ? 'denied' : 'allowed')
  polls.delete(hash)
  if (!finished) throw new InvalidGrant('device code is invalid or was used already')
  if (outcome.answer === 'access_denied' || finished.codeHash === null) throw new PollAccessDenied('the user denied access')
  const minted = mintForCode(ctx, client.id)
  const exchanged = await ctx.store.grants.exchangeCode({
    codeHash: finished.codeHash,
    now: ctx.clock.now(),
    expect: { clientId: client.id, redirectUri: DEVICE_REDIRECT, challenge: null, audience: undefined },
    tokens: minted.tokens,
    // Written in the exchange's transaction, with the code's user and scope.
    audit: ctx.audit.event('token.issued', { clientId: client.id, request, detail: { grant: 'device_code' } }),
  })
  if (!exchanged.ok) throw new InvalidGrant('device code is invalid or was used already')
  const { code } = exchanged
  return withIdToken(ctx, await minted.response(exchanged, code), { userId: code.userId, clientId: client.id, idTokenAlg: client.idTokenAlg, grantScope: code.scope, nonce: null, authTime: code.authTime, amr: code.amr, sid: code.sid, firstInSession: true })
}
