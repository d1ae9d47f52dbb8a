import { describe, expect, test } from 'bun:test'
import css from '../../src/views/app.css' with { type: 'text' }
import { contrast, PAIRS, themes, tokensOf } from './tokens'

// SPEC "Brand and language" → "Every screen", WCAG 2.2 AA: text 4.5:1 (SC 1.4.3), the boundary of
// a control and the focus ring 3:1 against what surrounds them (SC 1.4.11).

describe('app.css: one set of colour tokens, AA contrast in both themes (issue 36)', () => {
  for (const theme of ['light', 'dark'] as const)
    test(`${theme}: every declared foreground/background pair reaches its WCAG AA ratio`, () => {
      const tokens = themes(css)[theme]
      const failures = PAIRS.map(([fg, bg, min, where]) => ({ fg, bg, min, where, ratio: Math.round(contrast(tokens[fg]!, tokens[bg]!) * 100) / 100 })).filter((p) => !(p.ratio >= p.min))
      expect(failures).toEqual([])
    })

  test('the ratios are WCAG 2.2 ones: the dark-mode numbers issue 36 measured come out the same', () => {
    // Issue 36: the old accent #2f5bd3 on Chromium's dark Canvas #121212 (secondary buttons), and the old muted grey.
    expect(contrast('#2f5bd3', '#121212').toFixed(2)).toBe('3.17')
    expect(contrast('#6b7280', '#121212').toFixed(2)).toBe('3.88')
    expect(contrast('#ffffff', '#000000')).toBe(21)
  })

  test('both themes define the same colour tokens, and the dark theme sets every one of them', () => {
    const light = tokensOf(/^:root\s*\{([^}]*)\}/m.exec(css)![1]!)
    const dark = tokensOf(/@media\s*\(prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{([^}]*)\}/.exec(css)![1]!)
    const colours = (t: Record<string, string>) => Object.keys(t).filter((k) => k.startsWith('--color-')).sort()
    expect(colours(dark)).toEqual(colours(light))
    expect(colours(light).length).toBeGreaterThan(0)
    for (const k of ['--space-1', '--radius-md']) expect(light[k]).toBeDefined()
  })

  test('every colour in the sheet comes from a token, and every token used is declared', () => {
    // The sheet without its token blocks: what is left must name colours only through var(--color-…).
    const rules = css.replace(/^:root\s*\{[^}]*\}/m, '').replace(/@media\s*\(prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{[^}]*\}\s*\}/, '')
    const literal = /#[0-9a-f]{3,8}\b|\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color-mix)\(|(?<![-\w])(?:white|black|red|blue|green|gray|grey|Canvas|CanvasText|LinkText)(?![-\w])/gi
    expect(rules.replace(/\/\*[\s\S]*?\*\//g, '').match(literal)).toBeNull()
    const used = new Set([...css.matchAll(/var\((--[a-z0-9-]+)\)/g)].map((m) => m[1]!))
    const declared = themes(css).light
    expect([...used].filter((t) => declared[t] === undefined)).toEqual([])
    // The focus ring is drawn, and drawn with its token.
    expect(css).toContain(':focus-visible { outline: 3px solid var(--color-focus);')
  })
})
