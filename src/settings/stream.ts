import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import { errorResponses } from '../docs/openapi'
import { randomToken, sha256 } from '../lib/crypto'
import { InsufficientScope, InvalidToken, TemporarilyUnavailable, TooManyRequests } from '../lib/errors'
import { CORS_HEADERS, NOSNIFF, apiHeaders, json } from '../lib/http'
import { authenticateBearer, isUserGrant, checkClientId } from '../oauth/bearer'
import type { UserGrant } from '../oauth/tokens'
import type { Stream } from './hub'
import { checkSince, parseRevision } from './sync'

/** A ticket stands for its token this long, once (SPEC). */
const TICKET_TTL_MS = 30_000
const TICKET_PREFIX = 'lk_st_'
/** Bytes a reader may fall behind before its stream ends ("backlog"); it resumes with Last-Event-ID. */
const BACKLOG_BYTES = 1024 * 1024
const encoder = new TextEncoder()

const STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-store',
  // nginx and others buffer responses unless told not to: events must not wait.
  'x-accel-buffering': 'no',
  ...CORS_HEADERS,
  ...NOSNIFF,
}

/** The stream's token: a one-time ticket (EventSource cannot send a header) or the Authorization header. */
async function streamGrant(ctx: AppContext, request: Request, ticket: string | undefined, clientId: string | undefined): Promise<UserGrant> {
  if (ticket === undefined) return authenticateBearer(ctx, request, 'settings:read', clientId)
  const tokenId = await ctx.store.tokens.useStreamTicket(sha256(ticket), ctx.clock.now())
  const grant = tokenId === undefined ? undefined : await ctx.tokens.grantById(tokenId)
  if (!grant || grant.resource !== null || !isUserGrant(grant)) throw new InvalidToken('the ticket is invalid, used or expired (a ticket works once, for 30 seconds)', { 'www-authenticate': 'Bearer realm="latchkey", error="invalid_token"' })
  if (!grant.scopes.includes('settings:read')) throw new InsufficientScope('the access token lacks the scope settings:read')
  if (clientId !== undefined) checkClientId(grant, clientId)
  return grant
}

/**
 * Settings sync's live feed (SPEC): Server-Sent Events of the token's user's settings for the
 * token's app, in revision order, on every instance. `Last-Event-ID` (or `?since=`) replays what
 * was missed first. The stream ends (`event: end`, with a reason) when its token expires or is
 * revoked, when the reader falls 1 MiB behind, or when the server stops.
 */
export function settingsStreamRoutes(ctx: AppContext) {
  async function open(request: Request, query: { ticket?: string; since?: string; client_id?: string }): Promise<Response> {
    const grant = await streamGrant(ctx, request, query.ticket, query.client_id)
    const resumeRaw = request.headers.get('last-event-id') ?? query.since
    const resumeName = request.headers.has('last-event-id') ? 'Last-Event-ID' : 'since'
    const resume = resumeRaw === undefined ? undefined : parseRevision(resumeRaw.trim(), resumeName)
    // The slot is taken here, before any other await, and given back unless the stream opens.
    const refusal = ctx.settingsHub.reserve(grant.user.id)
    if (refusal === 'user') throw new TooManyRequests('this user has 20 settings streams open on this server already', { 'retry-after': '10' })
    if (refusal) throw new TemporarilyUnavailable(refusal === 'closing' ? 'the server is stopping' : 'this server has as many settings streams open as it may', { 'retry-after': '5' })
    try {
      return await openReserved(grant, resume, resumeName)
    } catch (error) {
      ctx.settingsHub.release(grant.user.id)
      throw error
    }
  }

  async function openReserved(grant: UserGrant, resume: number | undefined, resumeName: string): Promise<Response> {
    const head = await ctx.store.settings.changesSince(grant.user.id, grant.clientId, Number.MAX_SAFE_INTEGER)
    if (resume !== undefined) checkSince(head, resume, resumeName)

    let controller!: ReadableStreamDefaultController<Uint8Array>
    let ended = false
    const stream: Stream = {
      userId: grant.user.id,
      clientId: grant.clientId,
      tokenId: grant.tokenId,
      expiresAt: grant.expiresAt,
      last: resume ?? head.revision,
      send(text) {
        if (ended) return false
        controller.enqueue(encoder.encode(text))
        return (controller.desiredSize ?? 0) > -BACKLOG_BYTES
      },
      end(reason) {
        if (ended) return
        ended = true
        ctx.settingsHub.remove(stream)
        try {
          controller.enqueue(encoder.encode(`event: end\ndata: {"reason":"${reason}"}\n\n`))
          controller.close()
        } catch {
          // The reader is gone already.
        }
      },
    }
    const body = new ReadableStream<Uint8Array>(
      {
        start(c) {
          controller = c
          // EventSource reconnects after `retry` ms, sending Last-Event-ID.
          c.enqueue(encoder.encode('retry: 2000\n\n'))
        },
        cancel() {
          ended = true
          ctx.settingsHub.remove(stream)
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
    )
    ctx.settingsHub.add(stream)
    return new Response(body, { status: 200, headers: STREAM_HEADERS })
  }

  return new Elysia({ name: 'settings-stream' })
    .get(
      '/api/settings-events',
      ({ request, query }) => open(request, query),
      {
        query: t.Object({ client_id: t.Optional(t.String()), since: t.Optional(t.String()), ticket: t.Optional(t.String()) }),
        response: errorResponses(400, 401, 403, 410, 429, 503),
        detail: {
          tags: ['Settings'],
          summary: 'Server-Sent Events of the settings (scope settings:read): id = revision, event set (with etag) or delete; Last-Event-ID or since replays first',
          security: [{ bearer: [] }, {}],
        },
      },
    )
    .post(
      '/api/settings-events/ticket',
      async function ticket({ request }) {
        const grant = await authenticateBearer(ctx, request, 'settings:read')
        const value = randomToken(TICKET_PREFIX)
        await ctx.store.tokens.insertStreamTicket(sha256(value), grant.tokenId, ctx.clock.now() + TICKET_TTL_MS)
        return json({ ticket: value }, 200, apiHeaders({}))
      },
      {
        response: errorResponses(401, 403),
        detail: { tags: ['Settings'], summary: 'A one-time ticket (30 s) for GET /api/settings-events?ticket=… (EventSource cannot send a header)', security: [{ bearer: [] }] },
      },
    )
}
