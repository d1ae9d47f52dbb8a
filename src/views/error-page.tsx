/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@kitajs/html'
import { Layout } from './layout'
import { htmlPage } from './page'

export function ErrorPage(props: { title: string; detail: string }): JSX.Element {
  return (
    <Layout title={props.title}>
      <h1 safe>{props.title}</h1>
      <p safe>{props.detail}</p>
      <p>
        <a href="/">Go to the start page</a>
      </p>
    </Layout>
  )
}

/** An error shown to a person: a page with the given status, never a redirect. */
export function errorPageResponse(status: number, title: string, detail: string, headers?: Record<string, string>): Response {
  return htmlPage(<ErrorPage title={title} detail={detail} />, { status, headers })
}

/** What a browser gets for a path no route serves (and for /admin when not an admin): it names no path, so a link cannot put words in it. */
export function notFoundPage(headers?: Record<string, string>): Response {
  return errorPageResponse(404, 'Page not found', 'There is no page at this address. Check the link you followed or typed.', headers)
}
