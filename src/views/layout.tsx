/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html, type Children } from '@kitajs/html'
import { currentBrand, type Brand } from '../brand'
import { currentSpeech, formatTime, t, th } from '../i18n'
import { LOCALES, LOCALE_NAMES } from '../i18n/locales'

/** The operator's logo (light and dark), or their name where there is none (SPEC "Brand and language"). */
function BrandMark(props: { brand: Brand }): JSX.Element {
  const { brand } = props
  if (!brand.logoUrl)
    return (
      <p class="brand-name" safe>
        {brand.name}
      </p>
    )
  return (
    <picture>
      {brand.logoDarkUrl ? <source srcset={attr(brand.logoDarkUrl)} media="(prefers-color-scheme: dark)" /> : ''}
      <img src={attr(brand.logoUrl)} alt={attr(brand.name)} />
    </picture>
  )
}

/**
 * Every page's footer: the language menu, a form that works without JavaScript. Its POST sets
 * the language cookie and comes back here (src/i18n/routes.ts).
 */
function LanguageMenu(): JSX.Element {
  const s = currentSpeech()
  // The same for every page of a language but for the page it comes back to: made once per language.
  // Keyed by language and form action (two of them): bounded.
  const key = s.menu ? `${s.locale} ${s.menu}` : s.locale
  let menu = MENUS.get(key)
  if (!menu) {
    menu = ((<LanguageMenuOf />) as string).split(HERE) as [string, string]
    MENUS.set(key, menu)
  }
  return menu[0] + attr(s.here) + menu[1]
}

const HERE = '\u0000here\u0000'
const MENUS = new Map<string, [string, string]>()

function LanguageMenuOf(): JSX.Element {
  const s = currentSpeech()
  return (
    <footer>
      <form method="post" action={attr(s.menu ?? '/language')} class="language">
        <input type="hidden" name="return_to" value={HERE} />
        <label for="lk-language">{th('layout.language')}</label>
        <select id="lk-language" name="locale">
          {LOCALES.map((l) => (
            <option value={l} lang={l} selected={l === s.locale} safe>
              {LOCALE_NAMES[l]}
            </option>
          ))}
        </select>
        <button type="submit" class="secondary">
          {th('layout.languageChange')}
        </button>
      </form>
    </footer>
  )
}

export function Layout(props: { title: string; wide?: boolean; admin?: boolean; children?: Children }): JSX.Element {
  const brand = currentBrand()
  const s = currentSpeech()
  return (
    <html lang={s.locale} dir={s.dir}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title safe>
          {props.title} · {brand.name}
        </title>
        <link rel="icon" href={attr(brand.faviconUrl)} type={brand.faviconType} />
        <link rel="stylesheet" href={attr(brand.appCssUrl)} />
        {brand.cssUrl ? <link rel="stylesheet" href={attr(brand.cssUrl)} /> : ''}
      </head>
      <body>
        <header class={props.admin ? 'brand admin' : props.wide ? 'brand wide' : 'brand'}>
          <BrandMark brand={brand} />
        </header>
        <main class={props.admin ? 'admin' : props.wide ? 'wide' : undefined}>{props.children}</main>
        <LanguageMenu />
      </body>
    </html>
  )
}

/**
 * An attribute value, escaped whole: `&`, `<`, `>`, `"` and `'` (SPEC "Hostile input"). The JSX
 * runtime escapes only `"` in attributes, so `a&lt;b` would reach the browser as `a<b`; every
 * attribute that carries data goes through here.
 */
export function attr(value: string): string {
  return Bun.escapeHTML(value)
}

/** A hidden form field whose value round-trips byte for byte. */
export function Hidden(props: { name: string; value: string }): JSX.Element {
  return <input type="hidden" name={props.name} value={attr(props.value)} />
}

/** The hidden CSRF field every form carries. */
export function CsrfField(props: { token: string }): JSX.Element {
  return <Hidden name="csrf_token" value={props.token} />
}

export function ErrorNote(props: { message?: string }): JSX.Element {
  return props.message ? (
    <p class="error" role="alert" safe>
      {props.message}
    </p>
  ) : (
    ''
  )
}

/** A day, as the account page shows dates (2026-11-24 in English; in the reader's zone), with the exact time for machines. */
export function When(props: { at: number }): JSX.Element {
  return (
    <time datetime={new Date(props.at).toISOString()} safe>
      {formatTime(props.at, 'date')}
    </time>
  )
}

/** "not used yet", or "last used <day>". */
export function LastUsed(props: { at: number | null }): JSX.Element {
  return props.at === null ? th('common.notUsedYet') : th('common.lastUsed', { day: { html: <When at={props.at} /> as string } })
}

/** A form that is one button (with its CSRF token and hidden fields): revoke, remove, sign out… */
export function ButtonForm(props: { action: string; csrf: string; label: string; kind?: 'danger' | 'secondary'; fields?: Record<string, string>; inline?: boolean; ariaLabel?: string }): JSX.Element {
  return (
    <form method="post" action={props.action} class={props.inline === false ? undefined : 'inline'}>
      <CsrfField token={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => <Hidden name={name} value={value} />)}
      <button type="submit" class={props.kind} aria-label={props.ariaLabel === undefined ? undefined : attr(props.ariaLabel)} safe>
        {props.label}
      </button>
    </form>
  )
}
