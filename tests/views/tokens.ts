/** Reading app.css's colour tokens, for the contrast tests (tests/views/contrast.test.ts, tests/brand/). */
export { contrast } from '../../src/brand/colors'

/** The `--name: value` declarations of one block's body. */
export function tokensOf(body: string): Record<string, string> {
  return Object.fromEntries([...body.matchAll(/(--[a-z0-9-]+)\s*:\s*([^;]+);/g)].map((m) => [m[1]!, m[2]!.trim()]))
}

/**
 * The light tokens (the first :root, then any later top-level :root) and the dark ones (each
 * :root under prefers-color-scheme: dark, over the light), in the order a browser applies them.
 */
export function themes(sheet: string): { light: Record<string, string>; dark: Record<string, string> } {
  const light = /^:root\s*\{([^}]*)\}/m.exec(sheet)
  const darks = [...sheet.matchAll(/@media\s*\(prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{([^}]*)\}/g)]
  if (!light || !darks.length) throw new Error('app.css declares no light :root tokens or no dark ones')
  const l = { ...tokensOf(light[1]!), ...Object.assign({}, ...[...sheet.slice(light.index + light[0].length).matchAll(/^:root\s*\{([^}]*)\}/gm)].map((m) => tokensOf(m[1]!))) }
  return { light: l, dark: Object.assign({ ...l }, ...darks.map((d) => tokensOf(d[1]!))) }
}

/** Every foreground the sheet puts on a background, and the least ratio WCAG AA asks of it. */
const TEXT = 4.5
const UI = 3
export const PAIRS: Array<[fg: string, bg: string, min: number, where: string]> = [
  ['--color-text', '--color-surface', TEXT, 'body text on the card'],
  ['--color-text', '--color-bg', TEXT, 'body text on the page (narrow screens, error pages)'],
  ['--color-muted', '--color-surface', TEXT, '.muted text, table labels, placeholders'],
  ['--color-muted', '--color-bg', TEXT, '.muted text outside the card'],
  ['--color-accent', '--color-surface', TEXT, 'links and secondary buttons'],
  ['--color-accent', '--color-bg', TEXT, 'links outside the card'],
  ['--color-accent-hover', '--color-surface', TEXT, 'a hovered link'],
  ['--color-accent', '--color-notice-bg', TEXT, 'a hovered secondary button; a link in a notice'],
  ['--color-on-accent', '--color-accent', TEXT, 'primary button label'],
  ['--color-on-accent', '--color-accent-hover', TEXT, 'hovered primary button label'],
  ['--color-danger', '--color-surface', TEXT, 'danger buttons'],
  ['--color-danger', '--color-error-bg', TEXT, 'error notes; a hovered danger button'],
  ['--color-text', '--color-notice-bg', TEXT, 'notices'],
  ['--color-text', '--color-code-bg', TEXT, 'code and secrets'],
  ['--color-control-border', '--color-surface', UI, 'input and secondary button borders'],
  ['--color-accent', '--color-surface', UI, 'primary button shape; checkbox'],
  ['--color-danger', '--color-surface', UI, 'danger button border'],
  ['--color-focus', '--color-surface', UI, 'focus ring on the card'],
  ['--color-focus', '--color-bg', UI, 'focus ring on the page'],
]
