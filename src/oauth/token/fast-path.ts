import { ParseError } from 'elysia'
import type { AppContext } from '../../context'
import { errorAnswer } from '../../error-answer'
import { API_BODY_LIMIT, mediaType, parseFormText, readBodyBytes, textOf } from '../../lib/http'
import { createRequestGuard } from '../../web/request-guard'
import { DEVICE_CODE } from '../clients'
import { pendingFromBody, pendingFromMemory, pollBodyKey } from './grants/device_code'
import { answerToken } from './index'
import type { TokenRequest } from './model'
import { keepParsed } from './parse'

export const TOKEN_PATH = '/api/oauth/token'
const FORM = 'application/x-www-form-urlencoded'

/**
 * A device's poll (RFC 8628 §3.4) answered before Elysia: a TV polls every 5 s for as long as its
 * person takes, and a poll that finds nothing is to cost no more than a userinfo (issue 38
 * "Speed"); Elysia's context, parse hooks, validation and response mapping were most of it.
 * Everything a poll meets there is here too, in the same order: the request guard (Host, a body
 * declared too large), the route's parser (as ./parse.ts reads a form: size, UTF-8, repeated parameters; what it
 * throws is a ParseError, as Elysia wraps it), the route's own answer (answerToken: client
 * authentication, the grant, its refusals) and the app's error answer for anything else it
 * throws. A form body's values are all strings, so the route's schema (TokenRequest) holds for
 * every one. Any other method, path or Content-Type: undefined, and Elysia answers it; a form
 * of another grant is handed on with the parameters read (parseTokenBody takes them).
 */
export function tokenFastPath(ctx: AppContext, allowedMethods: (path: string) => string[], router: (request: Request) => Promise<Response>): (request: Request, path: string) => Response | Promise<Response> | undefined {
  const guard = createRequestGuard()
  const failed = (code: string, error: unknown, request: Request) => errorAnswer(ctx, allowedMethods, { code, error, request, path: TOKEN_PATH })
  const unparsed = (error: unknown, request: Request) => failed('PARSE', new ParseError(error as Error), request)
  // One async step, the body's read (each async layer cost a poll ~0.5 µs; issue 38 "Speed").
  const poll = (request: Request): Promise<Response> =>
    readBodyBytes(request, API_BODY_LIMIT).then(
      (bytes) => answer(request, bytes),
      (error: unknown) => unparsed(error, request),
    )
  function answer(request: Request, bytes: Uint8Array): Response | Promise<Response> {
    // A device's poll repeats byte for byte: one answered from memory before is not parsed again.
    const bodyKey = pollBodyKey(bytes)
    const known = bodyKey === undefined ? undefined : pendingFromBody(ctx, request, bodyKey)
    if (known) return known
    let params: Record<string, string>
    try {
      params = parseFormText(textOf(bytes), true)
    } catch (error) {
      return unparsed(error, request)
    }
    if (params.grant_type !== DEVICE_CODE) {
      keepParsed(request, params)
      return router(request)
    }
    return (
      pendingFromMemory(ctx, request, params, bodyKey) ??
      // Elysia's onError is given the error's own code, if it has one.
      answerToken(ctx, request, params as TokenRequest).catch((error: unknown) => failed(((error as { code?: string } | null)?.code as string | undefined) ?? 'UNKNOWN', error, request))
    )
  }
  return (request, path) => {
    if (path !== TOKEN_PATH || request.method !== 'POST' || mediaType(request) !== FORM) return undefined
    return guard({ request }, path) ?? poll(request)
  }
}
