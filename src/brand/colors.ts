/**
 * BRAND_COLOR → the accent tokens of both themes (SPEC "Brand and language"). WCAG 2.2 AA: text
 * and button labels 4.5:1 (SC 1.4.3), so where the colour cannot reach that against the theme's
 * backgrounds it is darkened (light) or lightened (dark) until it does, and the caller warns.
 */

type Rgb = [number, number, number]

function rgbOf(hex: string): Rgb {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex)
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`)
  return [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)]
}

const hexOf = (rgb: Rgb) => '#' + rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')

/** WCAG 2.2 relative luminance. */
export function luminance(hex: string): number {
  const [r, g, b] = rgbOf(hex).map((v) => {
    const c = v / 255
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }) as Rgb
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** WCAG 2.2 contrast ratio, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

/** `hex` moved `share` (0..1) of the way to `to`. */
export function mix(hex: string, to: string, share: number): string {
  const a = rgbOf(hex)
  const b = rgbOf(to)
  return hexOf(a.map((c, i) => c + (b[i]! - c) * share) as Rgb)
}

/** A theme's fixed colours that the accent is drawn on (app.css's tokens). */
export interface ThemeBase {
  /** Backgrounds the accent is text on: surface, page, notice. */
  backgrounds: readonly string[]
  /** The label colour on an accent button. */
  onAccent: string
  /** The way the accent moves to gain contrast: black for a light theme, white for a dark one. */
  toward: string
}

// The values of src/views/app.css (tests/brand/colors.test.ts checks they still match it).
export const LIGHT: ThemeBase = { backgrounds: ['#ffffff', '#f5f6f8', '#e8eefc'], onAccent: '#ffffff', toward: '#000000' }
export const DARK: ThemeBase = { backgrounds: ['#161b22', '#0d1117', '#1c2740'], onAccent: '#0d1117', toward: '#ffffff' }

const TEXT = 4.5

export interface AccentTokens {
  accent: string
  hover: string
  /** The least ratio the accent reaches against the theme's backgrounds and its button label. */
  ratio: number
  /** The ratio the colour as given reached, when it had to be adjusted. */
  adjustedFrom?: number
}

const leastRatio = (c: string, base: ThemeBase) => Math.min(...[...base.backgrounds, base.onAccent].map((bg) => contrast(c, bg)))

/**
 * The accent for one theme: the colour as given when it reaches 4.5:1 against every background and
 * its button label, else the nearest shade toward black (light) or white (dark) that does. The
 * hover shade goes a further step the same way, so it keeps the ratio.
 */
export function accentFor(color: string, base: ThemeBase): AccentTokens {
  const given = leastRatio(color, base)
  let accent = color.toLowerCase()
  for (let step = 1; leastRatio(accent, base) < TEXT && step <= 100; step++) accent = mix(color, base.toward, step / 100)
  const hover = mix(accent, base.toward, 0.2)
  const ratio = leastRatio(accent, base)
  return { accent, hover, ratio, ...(accent === color.toLowerCase() ? {} : { adjustedFrom: given }) }
}

/** The CSS that follows app.css: the accent, its hover shade and the focus ring, per theme. */
export function brandTokensCss(light: AccentTokens, dark: AccentTokens): string {
  const block = (t: AccentTokens) => `--color-accent: ${t.accent}; --color-accent-hover: ${t.hover}; --color-focus: ${t.accent};`
  return `\n/* BRAND_COLOR */\n:root { ${block(light)} }\n@media (prefers-color-scheme: dark) { :root { ${block(dark)} } }\n`
}
