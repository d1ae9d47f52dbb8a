/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@kitajs/html'
import { attr } from './layout'

/** Where an app's logo is served (src/oauth/client-logo.ts), with its version so a new logo is a new URL. */
export const clientLogoPath = (id: string, etag: string) => `/assets/apps/${encodeURIComponent(id)}/logo?v=${etag}`

/**
 * An app's logo (`--logo-file`), same-origin. Its name is always written beside it, so the image
 * says nothing more (alt=""). Without a logo: nothing, or — in a list, to keep the names in line —
 * the name's first letter on a tile.
 */
export function AppLogo(props: { id: string; name: string; logoEtag: string | null; large?: boolean; placeholder?: boolean }): JSX.Element {
  const cls = props.large ? 'app-logo large' : 'app-logo'
  if (props.logoEtag) return <img class={cls} src={attr(clientLogoPath(props.id, props.logoEtag))} alt="" width={props.large ? '64' : '40'} height={props.large ? '64' : '40'} />
  if (!props.placeholder) return ''
  const initial = [...props.name.trim()][0]?.toUpperCase() ?? '?'
  return (
    <span class={`${cls} initial`} aria-hidden="true" safe>
      {initial}
    </span>
  )
}
