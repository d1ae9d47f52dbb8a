import { ApiError, PageError } from '../lib/errors'
import { MAX_FORM_BYTES, mediaType, readBodyText, setField, type BodyLimit } from '../lib/http'

export type FormFields = Record<string, string | string[]>

const FORM_BODY_LIMIT: BodyLimit = {
  bytes: MAX_FORM_BYTES,
  tooLarge: () => new PageError(413, 'error.formTooLarge'),
}

/**
 * The body of every page POST (SPEC "Hostile input"): only `application/x-www-form-urlencoded`
 * (415 otherwise, so no JSON ever reaches a page route's validator), at most 64 KiB, read
 * before any session or CSRF check. A repeated field becomes an array, for the schema to refuse.
 */
export async function parsePageForm({ request }: { request: Request }): Promise<FormFields> {
  if (mediaType(request) !== 'application/x-www-form-urlencoded')
    throw new PageError(415, 'error.formType')
  let text: string
  try {
    text = await readBodyText(request, FORM_BODY_LIMIT)
  } catch (error) {
    if (error instanceof ApiError) throw new PageError(400, 'error.formUnreadable')
    throw error
  }
  return formFields(text)
}

/**
 * A form's fields, a repeated one as an array, in linear time: 64 KiB of `a=&a=&…` (21,000
 * repeats) once cost 136 ms of CPU, each repeat copying the array so far. A field named
 * `__proto__` is a field like any other, never the object's prototype.
 */
export function formFields(text: string | URLSearchParams): FormFields {
  const fields: FormFields = {}
  for (const [name, value] of typeof text === 'string' ? new URLSearchParams(text) : text) {
    if (!Object.hasOwn(fields, name)) {
      setField<string | string[]>(fields, name, value)
      continue
    }
    const previous = fields[name]!
    if (Array.isArray(previous)) previous.push(value)
    else fields[name] = [previous, value]
  }
  return fields
}
