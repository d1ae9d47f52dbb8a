import en from '../../src/i18n/messages/en'
import de from '../../src/i18n/messages/de'
import { placeholders } from '../../src/i18n/catalog'

const forms = (m: unknown): string[] => (typeof m === 'string' ? [m] : Object.values(m as Record<string, string>))

/**
 * The literal pieces of every English message that German words differently (a message the
 * same in both, like "Code", says nothing), at least four characters long.
 */
const PIECES: Array<{ key: string; piece: RegExp }> = Object.entries(en).flatMap(([key, message]) => {
  const german = (de as Record<string, unknown>)[key]
  if (JSON.stringify(german) === JSON.stringify(message)) return []
  return forms(message).flatMap((text) => {
    const names = new Set(placeholders(text))
    return text
      .split(/\{([A-Za-z][A-Za-z0-9_]*)\}/)
      .filter((part, i) => i % 2 === 0 || !names.has(part))
      .map((p) => p.trim().replace(/^[.,:;()—–-]+|[.,:;()—–-]+$/g, '').trim())
      .filter((p) => p.length >= 4)
      .map((p) => ({ key, piece: new RegExp(`(?<![\\p{L}-])${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}-])`, 'u') }))
  })
})

/** A page's visible text and attribute words (title, aria-label, placeholder), entities decoded. */
export function pageText(html: string): string {
  const attrs = [...html.matchAll(/\s(?:aria-label|placeholder|title|alt)="([^"]*)"/g)].map((m) => m[1]).join(' ')
  const text = html.replace(/<script[\s\S]*?<\/script>/g, ' ').replace(/<[^>]+>/g, ' ')
  return (text + ' ' + attrs)
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
}

/** The English messages (key: piece) still on a page that should be German. */
export function englishLeft(html: string): string[] {
  const text = pageText(html)
  return PIECES.filter((p) => p.piece.test(text)).map((p) => `${p.key}: ${p.piece.source}`)
}
