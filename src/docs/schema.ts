/**
 * Small builders for the hand-written parts of the OpenAPI document (operations.ts): what the
 * route schemas cannot say — examples, answers that are not JSON, routes that answer a browser.
 * Plain OpenAPI 3.1 objects (JSON Schema 2020-12), so the document says nothing of how it is made.
 */

export type Schema = Record<string, unknown>
export interface Media {
  schema?: Schema
  example?: unknown
  examples?: Record<string, { summary?: string; value: unknown }>
}
export interface Response {
  description: string
  headers?: Record<string, { description: string; schema: Schema }>
  content?: Record<string, Media>
}
export interface Operation {
  tags?: string[]
  summary?: string
  description?: string
  parameters?: Array<{ name: string; in: 'query' | 'header' | 'path' | 'cookie'; required?: boolean; description?: string; schema: Schema; example?: unknown }>
  requestBody?: { required?: boolean; content: Record<string, Media> }
  responses?: Record<string, Response>
  security?: Array<Record<string, string[]>>
  servers?: Array<{ url: string; description?: string }>
}

export const str = (description?: string, extra: Schema = {}): Schema => ({ type: 'string', ...(description ? { description } : {}), ...extra })
export const int = (description?: string): Schema => ({ type: 'integer', ...(description ? { description } : {}) })
export const bool = (description?: string): Schema => ({ type: 'boolean', ...(description ? { description } : {}) })
export const strings = (description?: string): Schema => ({ type: 'array', items: { type: 'string' }, ...(description ? { description } : {}) })

/** An object schema: names ending in `?` are optional. */
export function object(props: Record<string, Schema>, description?: string, additional = false): Schema {
  const properties: Record<string, Schema> = {}
  const required: string[] = []
  for (const [name, schema] of Object.entries(props)) {
    const optional = name.endsWith('?')
    const key = optional ? name.slice(0, -1) : name
    properties[key] = schema
    if (!optional) required.push(key)
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), ...(description ? { description } : {}), ...(additional ? {} : { additionalProperties: false }) }
}

export const query = (name: string, schema: Schema, required = false, example?: unknown) => ({ name, in: 'query' as const, required, schema, ...(example === undefined ? {} : { example }) })
export const header = (name: string, description: string, required = false) => ({ name, in: 'header' as const, required, description, schema: str() })

/** A form body (application/x-www-form-urlencoded), with one example per case. */
export function formBody(schema: Schema, examples: Record<string, { summary?: string; value: Record<string, string> }>, alsoJson = false) {
  const media: Media = { schema, examples }
  return { required: true, content: { 'application/x-www-form-urlencoded': media, ...(alsoJson ? { 'application/json': media } : {}) } }
}

export const jsonBody = (schema: Schema, example: unknown) => ({ required: true, content: { 'application/json': { schema, example } } })

export const jsonAnswer = (description: string, schema: Schema, example: unknown, headers?: Response['headers']): Response => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema, example } },
})

/** An HTML page for a person (sign-in, confirmation, error). */
export const page = (description: string): Response => ({ description, content: { 'text/html': { schema: str(), example: '<!doctype html><html lang="en">…</html>' } } })

/** A redirect: where to, in Location. */
export const redirect = (description: string, location: string): Response => ({
  description,
  headers: { Location: { description: 'where the browser goes next', schema: str(undefined, { example: location }) } },
})

/** RFC 6749 §5.2 and RFC 6750 §3.1 error codes, by the status they come with. */
const ERROR_EXAMPLES: Record<string, { error: string; error_description: string }> = {
  '400': { error: 'invalid_request', error_description: 'client_id is required' },
  '401': { error: 'invalid_token', error_description: 'the access token is invalid or expired' },
  '403': { error: 'insufficient_scope', error_description: 'the access token lacks the scope settings:read' },
  '404': { error: 'not_found', error_description: 'no setting named "theme"' },
  '409': { error: 'quota_exceeded', error_description: 'this application may keep at most 1000 settings per user' },
  '410': { error: 'gone', error_description: 'changes after revision 3 are no longer kept; fetch the settings again' },
  '412': { error: 'precondition_failed', error_description: 'If-Match does not match the stored version' },
  '413': { error: 'value_too_large', error_description: 'value is larger than 65536 bytes of JSON' },
  '429': { error: 'too_many_requests', error_description: 'try again later' },
  '503': { error: 'temporarily_unavailable', error_description: 'try again in a second' },
}

export const ERROR_SCHEMA = object({ error: str('an error code (RFC 6749 §5.2 names where it applies)'), 'error_description?': str('what went wrong, for a developer') }, 'An error')

/** The error example for a status (a generic one for statuses not listed). */
export const errorExample = (status: string) => ERROR_EXAMPLES[status] ?? { error: 'invalid_request', error_description: 'the request is not valid' }

export const errorAnswer = (status: string, description: string, example = errorExample(status)): Response => jsonAnswer(description, ERROR_SCHEMA, example)
