/**
 * Control and invisible formatting characters (Unicode Cc, Cf), line/paragraph separators, and
 * every default-ignorable code point (the combining grapheme joiner U+034F, variation selectors,
 * the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, …): each renders as nothing, so
 * `alice\u034f@example.com` would show as `alice@example.com`.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u
const INVISIBLE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu
/** What JSON.stringify leaves raw but a terminal may still act on: DEL, C1 controls, Cf, separators. */
const JSON_UNSAFE = /[\u007f-\u009f\p{Cf}\u2028\u2029]/gu

export function hasInvisible(text: string): boolean {
  return INVISIBLE.test(text)
}

const codePoint = (c: string) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')

/** User data for a terminal: every control or invisible character shown as `\uXXXX`, never sent raw. */
export function escapeForTerminal(text: string): string {
  return text.replace(INVISIBLE_ALL, codePoint)
}

/** JSON for a terminal: still valid JSON, with DEL, C1 and invisible characters as \u escapes too. */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_UNSAFE, codePoint)
}
