/**
 * The API reference (/docs) in every language (SPEC "Brand and language": every page): each of
 * the OpenAPI document's own texts — every summary and description, as the served document has
 * them — has words in each of the other eleven languages (src/docs/translations/*.json), none is
 * left over from a text the document no longer has, and the words keep the text's protocol
 * tokens (RFC and section numbers, parameter and error names). `/openapi.json` stays English.
 */
import { expect, test } from 'bun:test'
import { LOCALES } from '../../src/i18n/locales'
import { REFERENCE_TRANSLATIONS } from '../../src/docs/translations'
import { createTestApp } from '../helpers'

/** Every summary and description of the document, as the page shows them. */
function texts(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) texts(v, out)
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if ((k === 'summary' || k === 'description') && typeof v === 'string') out.add(v)
      else texts(v, out)
    }
  return out
}

const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
const source = texts(await (await t.app.handle(new Request('http://localhost:3000/openapi.json'))).json())

/** What must survive translation: RFC numbers and sections, snake_case and kebab-case names, URNs. */
const TOKEN = /RFC \d+|§[\d.]+|\b[a-z]+(?:_[a-z0-9]+)+\b|urn:[\w:.-]+|\b\d{2,}\b/g

test('the document has texts to translate (this test reads the served document)', () => {
  expect(source.size).toBeGreaterThan(150)
})

for (const locale of LOCALES.filter((l) => l !== 'en')) {
  test(`${locale}: every text of the reference has words, none stale, its protocol tokens kept`, () => {
    const words = REFERENCE_TRANSLATIONS[locale]
    expect([...source].filter((s) => !Object.hasOwn(words, s) || !words[s]!.trim())).toEqual([])
    expect(Object.keys(words).filter((k) => !source.has(k))).toEqual([])
    const lost = [...source].flatMap((s) => [...new Set(s.match(TOKEN) ?? [])].filter((token) => !words[s]!.includes(token)).map((token) => `${token} in "${s.slice(0, 60)}"`))
    expect(lost).toEqual([])
  })

  test(`${locale}: /docs shows no text of the reference in English`, async () => {
    const html = await (await t.app.handle(new Request('http://localhost:3000/docs', { headers: { 'accept-language': locale } }))).text()
    expect(html).toContain(`<html lang="${locale}"`)
    // (The footer's language menu names English in English: <option lang="en">.)
    expect(html.match(/<(?!option|html)[a-z]+ [^>]*lang="en"[^>]*>[^<]*/g) ?? []).toEqual([])
  })
}
