import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { InvalidRequest, NotFound, ValueTooLarge } from '../lib/errors'
import { CORS_HEADERS, NOSNIFF, apiHeaders, jsonText, readJsonObject } from '../lib/http'
import { authenticateBearer, checkClientId } from '../oauth/bearer'
import type { UserGrant } from '../oauth/tokens'
import type { CachedSetting } from './cache'
import {
  ClientIdQuery,
  KEY_PATTERN,
  KeyParams,
  ListQuery,
  SettingDeleted,
  SettingInput,
  SettingList,
  SettingOne,
  SettingSaved,
} from './model'
import { errorResponses } from '../docs/openapi'
import type { Preconditions } from '../db/store'
import { etagMatches, etagOf, listSettingsJson, refusalError, settingJson } from './service'
import { checkSince, deltaJson, parseRevision } from './sync'

function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key))
    throw new InvalidRequest('key must be 1 to 128 characters of A-Z a-z 0-9 . _ - :')
  return key
}

function preconditionsOf(request: Request): Preconditions {
  return {
    ifMatch: request.headers.get('if-match') ?? undefined,
    ifNoneMatch: request.headers.get('if-none-match') ?? undefined,
  }
}

/** Settings: the token's client is the namespace; a `client_id` given must be that client. */
export function settingsRoutes(ctx: AppContext) {
  const encoder = new TextEncoder()

  /** The list from the cache when it holds it, else from the store. */
  async function list({ user, clientId }: UserGrant): Promise<Response> {
    let body = ctx.settingsCache.getList(user.id, clientId)
    if (body === undefined) {
      const ticket = ctx.settingsCache.ticket()
      body = await listSettingsJson(ctx.store, user.id, clientId)
      ctx.settingsCache.setList(user.id, clientId, body, ticket)
    }
    return jsonText(body)
  }

  /** Settings sync: what changed after a revision (`since`), each key once at its latest state. */
  async function changesSince({ user, clientId }: UserGrant, raw: string): Promise<Response> {
    const since = parseRevision(raw, 'since')
    const delta = await ctx.store.settings.changesSince(user.id, clientId, since)
    checkSince(delta, since, 'since')
    return jsonText(deltaJson(delta, clientId))
  }

  /** One setting from the store (and into the cache); undefined when there is none. */
  async function readOne({ user, clientId }: UserGrant, key: string): Promise<CachedSetting | undefined> {
    const ticket = ctx.settingsCache.ticket()
    const stored = await ctx.store.settings.getSetting(user.id, clientId, key)
    if (!stored) return undefined
    const etag = etagOf(stored)
    const answer = { body: `{"setting":${settingJson(stored, clientId)}}`, etag, headers: apiHeaders({ etag }) }
    ctx.settingsCache.setOne(user.id, clientId, key, answer, ticket)
    return answer
  }

  /** The answer to GET /api/settings/:key: 200 with its ETag, or 304 when If-None-Match matches. */
  function answerOne(request: Request, key: string, found: CachedSetting | undefined): Response {
    if (!found) throw new NotFound(`no setting named "${key}"`)
    const ifNoneMatch = request.headers.get('if-none-match')
    if (ifNoneMatch && etagMatches(ifNoneMatch, found.etag))
      return new Response(null, { status: 304, headers: { etag: found.etag, 'cache-control': 'no-store', ...CORS_HEADERS, ...NOSNIFF } })
    return jsonText(found.body, 200, found.headers)
  }

  /** Cached, the answer is made synchronously: no promise for a token or a setting already known. */
  function one(request: Request, grant: UserGrant, key: string): Response | Promise<Response> {
    checkKey(key)
    const cached = ctx.settingsCache.getOne(grant.user.id, grant.clientId, key)
    return cached ? answerOne(request, key, cached) : readOne(grant, key).then((found) => answerOne(request, key, found))
  }

  return new Elysia({ name: 'settings' })
    .get(
      '/api/settings',
      async function listAll({ request, query }) {
        const grant = await authenticateBearer(ctx, request, 'settings:read', query.client_id)
        return query.since === undefined ? list(grant) : changesSince(grant, query.since)
      },
      {
        query: ListQuery,
        response: { 200: SettingList, ...errorResponses(400, 401, 403) },
        detail: { tags: ['Settings'], summary: "List the token's user's settings for the token's application, sorted by key (scope settings:read)", security: [{ bearer: [] }] },
      },
    )
    .get(
      '/api/settings/:key',
      function getOne({ request, query, params }): Response | Promise<Response> {
        const grant = authenticateBearer(ctx, request, 'settings:read', query.client_id)
        return grant instanceof Promise ? grant.then((g) => one(request, g, params.key)) : one(request, grant, params.key)
      },
      {
        query: ClientIdQuery,
        params: KeyParams,
        response: { 200: SettingOne, ...errorResponses(400, 401, 403, 404) },
        detail: { tags: ['Settings'], summary: 'Read one setting, with a strong ETag; If-None-Match gives 304 (scope settings:read)', security: [{ bearer: [] }] },
      },
    )
    .post(
      '/api/settings',
      async function save({ request, body }) {
        const { user, clientId } = await authenticateBearer(ctx, request, 'settings:write', body.client_id)
        const key = checkKey(body.key)
        const value = JSON.stringify(body.value)
        const valueBytes = encoder.encode(value).byteLength
        if (valueBytes > ctx.config.settingsMaxValueBytes)
          throw new ValueTooLarge(`value is larger than ${ctx.config.settingsMaxValueBytes} bytes of JSON`)
        const rules = { ...preconditionsOf(request), valueBytes, now: ctx.clock.now(), maxKeys: ctx.config.settingsMaxKeys, maxUserBytes: ctx.config.settingsMaxUserBytes }
        ctx.settingsCache.invalidate(user.id, clientId)
        const saved = await ctx.store.settings.saveSetting(user.id, clientId, key, value, rules).finally(() => ctx.settingsCache.invalidate(user.id, clientId))
        if (!saved.ok) throw refusalError(saved.refused, rules)
        const stored = saved.setting
        ctx.settingsHub.published(user.id, clientId, { revision: saved.revision, key, setting: stored })
        return jsonText(`{"success":true,"setting":${settingJson(stored, clientId)}}`, 200, { etag: etagOf(stored) })
      },
      {
        // Our parser answers every request; 'json' after it only tells the OpenAPI document.
        parse: [({ request }) => readJsonObject(request), 'json'],
        body: SettingInput,
        response: { 200: SettingSaved, ...errorResponses(400, 401, 403, 409, 412, 413) },
        detail: {
          tags: ['Settings'],
          summary: 'Create or replace a setting (scope settings:write). If-Match: update only that version; If-None-Match: * creates only',
          security: [{ bearer: [] }],
        },
      },
    )
    .delete(
      '/api/settings/:key',
      async function remove({ request, query, params }) {
        const grant = await authenticateBearer(ctx, request, 'settings:write')
        // The seed makes client_id required on DELETE.
        if (query.client_id === undefined) throw new InvalidRequest('client_id is required')
        checkClientId(grant, query.client_id)
        const { user, clientId } = grant
        const key = checkKey(params.key)
        const pre = preconditionsOf(request)
        ctx.settingsCache.invalidate(user.id, clientId)
        const deleted = await ctx.store.settings.deleteSetting(user.id, clientId, key, ctx.clock.now(), pre).finally(() => ctx.settingsCache.invalidate(user.id, clientId))
        if (!deleted.ok) throw deleted.refused === 'missing' ? new NotFound(`no setting named "${key}"`) : refusalError(deleted.refused, pre)
        ctx.settingsHub.published(user.id, clientId, { revision: deleted.revision, key, setting: undefined })
        return jsonText('{"success":true}')
      },
      {
        query: ClientIdQuery,
        params: KeyParams,
        response: { 200: SettingDeleted, ...errorResponses(400, 401, 403, 404, 412) },
        detail: { tags: ['Settings'], summary: 'Delete a setting; client_id is required (scope settings:write)', security: [{ bearer: [] }] },
      },
    )
}
