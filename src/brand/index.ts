/**
 * The brand as pages use it (SPEC "Brand and language"): made once per app from BRAND_*, and held
 * for each request the app answers, so the layout and the error pages find it without every page
 * passing it down. Nothing of it reaches a page but escaped text and same-origin URLs.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { silentLogger, type Logger } from '../lib/log'
import { accentFor, brandTokensCss, DARK, LIGHT } from './colors'
import { etagOf, type BrandConfig, type BrandFile } from './config'
import baseCss from '../views/app.css' with { type: 'text' }

export interface Brand {
  name: string
  /** The light logo's URL (with its version), or null: pages show the name. */
  logoUrl: string | null
  /** The dark logo's URL, for `prefers-color-scheme: dark`; null: the light one serves both. */
  logoDarkUrl: string | null
  faviconUrl: string
  faviconType: string
  /** app.css, with the accent tokens BRAND_COLOR sets after Latchkey's. */
  appCss: string
  appCssUrl: string
  /** BRAND_CSS's URL, linked after app.css. */
  cssUrl: string | null
  files: { logo: BrandFile | null; logoDark: BrandFile | null; favicon: BrandFile | null; css: BrandFile | null }
}

const versioned = (path: string, file: BrandFile | null) => (file ? `${path}?v=${file.etag}` : null)

/**
 * The brand of one app. A colour that misses WCAG AA in a theme is replaced there by the nearest
 * shade that reaches it, and a warn line says so (SPEC: "with a warn line").
 */
export function makeBrand(config: BrandConfig, log: Logger): Brand {
  let appCss = baseCss
  if (config.color) {
    const light = accentFor(config.color, LIGHT)
    const dark = accentFor(config.color, DARK)
    for (const [theme, t] of [['light', light], ['dark', dark]] as const)
      if (t.adjustedFrom !== undefined)
        log.warn(`BRAND_COLOR ${config.color} reaches ${t.adjustedFrom.toFixed(2)}:1 in the ${theme} theme, under WCAG AA's 4.5:1; that theme uses ${t.accent} (${t.ratio.toFixed(2)}:1)`, {
          variable: 'BRAND_COLOR',
          theme,
          given: config.color,
          used: t.accent,
        })
    appCss += brandTokensCss(light, dark)
  }
  return {
    name: config.name,
    logoUrl: versioned('/assets/brand/logo', config.logo),
    logoDarkUrl: versioned('/assets/brand/logo-dark', config.logoDark),
    faviconUrl: versioned('/assets/brand/favicon', config.favicon) ?? '/favicon.svg',
    faviconType: config.favicon?.type ?? 'image/svg+xml',
    appCss,
    appCssUrl: `/assets/app.css?v=${etagOf(new TextEncoder().encode(appCss))}`,
    cssUrl: versioned('/assets/brand.css', config.css),
    files: { logo: config.logo, logoDark: config.logoDark, favicon: config.favicon, css: config.css },
  }
}

const current = new AsyncLocalStorage<Brand>()
let fallback: Brand | undefined

/** Runs `answer` (one request to an app) with that app's brand. */
export function withBrand<T>(brand: Brand, answer: () => T): T {
  return current.run(brand, answer)
}

/** The brand of the request being answered; Latchkey's own outside one (a page rendered by a test). */
export function currentBrand(): Brand {
  return current.getStore() ?? (fallback ??= makeBrand({ name: 'Latchkey', logo: null, logoDark: null, favicon: null, color: null, css: null }, silentLogger))
}
