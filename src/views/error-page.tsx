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
    </Layout>
  )
}

/** An error shown to a person: a page with the given status, never a redirect. */
export function errorPageResponse(status: number, title: string, detail: string, headers?: Record<string, string>): Response {
  return htmlPage(<ErrorPage title={title} detail={detail} />, { status, headers })
}
