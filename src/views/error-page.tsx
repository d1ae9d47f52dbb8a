/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Layout } from './layout'

export function ErrorPage(props: { title: string; detail: string }): JSX.Element {
  return (
    <Layout title={props.title}>
      <h1 safe>{props.title}</h1>
      <p safe>{props.detail}</p>
    </Layout>
  )
}
