/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html, type Children } from '@kitajs/html'
import { currentBrand, type Brand } from '../brand'

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

export function Layout(props: { title: string; wide?: boolean; admin?: boolean; children?: Children }): JSX.Element {
  const brand = currentBrand()
  return (
    <html lang="en">
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

/** A day, as the account page shows dates: 2026-11-24, with the exact time for machines. */
export function When(props: { at: number }): JSX.Element {
  const iso = new Date(props.at).toISOString()
  return <time datetime={iso}>{iso.slice(0, 10)}</time>
}

/** "not used yet", or "last used <day>". */
export function LastUsed(props: { at: number | null }): JSX.Element {
  return props.at === null ? 'not used yet' : <>last used <When at={props.at} /></>
}

/** A form that is one button (with its CSRF token and hidden fields): revoke, remove, sign out… */
export function ButtonForm(props: { action: string; csrf: string; label: string; kind?: 'danger' | 'secondary'; fields?: Record<string, string>; inline?: boolean; ariaLabel?: string }): JSX.Element {
  return (
    <form method="post" action={props.action} class={props.inline === false ? undefined : 'inline'}>
      <CsrfField token={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => <Hidden name={name} value={value} />)}
      <button type="submit" class={props.kind} aria-label={props.ariaLabel}>
        {props.label}
      </button>
    </form>
  )
}
