/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@kitajs/html'
import { currentSpeech, th, type Speech } from '../i18n'
import type { MessageKey, PageErrorKey } from '../i18n/types'
import { PageError } from '../lib/errors'
import { Layout } from './layout'
import { htmlPage } from './page'

export function ErrorPage(props: { title: string; detail: string }): JSX.Element {
  return (
    <Layout title={props.title}>
      <h1 safe>{props.title}</h1>
      <p safe>{props.detail}</p>
      <p>
        <a href="/">{th('error.home')}</a>
      </p>
    </Layout>
  )
}

/** An error shown to a person: a page with the given status, never a redirect. */
export function errorPageResponse(status: number, title: string, detail: string, headers?: Record<string, string>, speech?: Speech): Response {
  return htmlPage(() => <ErrorPage title={title} detail={detail} />, { status, headers, speech })
}

/** An error page in the request's language: `key.title` and `key.detail` of the catalog. */
export function errorPageSaying(status: number, key: PageErrorKey, speech: Speech | undefined, params?: Readonly<Record<string, string | number>>, headers?: Record<string, string>): Response {
  const render = () => {
    // The key is checked by PageErrorKey; the params are the message's own (the catalog test holds them).
    const m = currentSpeech().messages
    return <ErrorPage title={m[`${key}.title` as MessageKey].text(params)} detail={m[`${key}.detail` as MessageKey].text(params)} />
  }
  return htmlPage(render, { status, headers, speech })
}

/** A PageError as its page: by its catalog key, or (the older form) its English words. */
export function pageErrorResponse(error: PageError, speech?: Speech, headers?: Record<string, string>): Response {
  return error.words ? errorPageSaying(error.status, error.words.key, speech, error.words.params, headers) : errorPageResponse(error.status, error.title, error.detail, headers, speech)
}

/** What a browser gets for a path no route serves (and for /admin when not an admin): it names no path, so a link cannot put words in it. */
export function notFoundPage(headers?: Record<string, string>, speech?: Speech): Response {
  return errorPageSaying(404, 'error.notFound', speech, undefined, headers)
}
