/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from '../config'
import { json } from '../lib/http'
import { buildOpenApiDocument } from './openapi'
import { Layout } from '../views/layout'
import { htmlPage } from '../views/page'

interface Operation {
  summary?: string
  description?: string
  tags?: string[]
  parameters?: Array<{ name: string; in: string; required?: boolean }>
  requestBody?: { content?: Record<string, { schema?: unknown }> }
  responses?: Record<string, { description?: string }>
  security?: Array<Record<string, unknown>>
}

type Spec = { info: { title: string; version: string; description?: string }; paths: Record<string, Record<string, Operation>> }

function ReferencePage(props: { spec: Spec }): JSX.Element {
  const { spec } = props
  return (
    <Layout title="API reference" wide>
      <h1 safe>
        {spec.info.title} {spec.info.version} — API reference
      </h1>
      <p safe>{spec.info.description}</p>
      <p>
        Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3), for client generators.
      </p>
      {Object.entries(spec.paths).flatMap(([path, methods]): JSX.Element[] =>
        Object.entries(methods).map(([method, op]) => (
          <section>
            <h2>
              <code safe>
                {method.toUpperCase()} {path}
              </code>
            </h2>
            {op.summary ? <p safe>{op.summary}</p> : ''}
            {op.description ? <p class="muted" safe>{op.description}</p> : ''}
            {op.security?.length ? (
              <p class="muted" safe>
                Auth: {op.security.flatMap((s) => Object.keys(s)).join(' or ')}
              </p>
            ) : (
              ''
            )}
            {op.parameters?.length ? (
              <p class="muted" safe>
                Parameters: {op.parameters.map((p) => `${p.name} (${p.in}${p.required ? ', required' : ''})`).join(', ')}
              </p>
            ) : (
              ''
            )}
            {op.requestBody?.content ? (
              <p class="muted" safe>
                Body: {Object.keys(op.requestBody.content).join(', ')}
              </p>
            ) : (
              ''
            )}
            <p class="muted" safe>
              Responses: {Object.entries(op.responses ?? {}).map(([status, r]) => `${status}${r.description ? ` ${r.description}` : ''}`).join(' · ')}
            </p>
          </section>
        )),
      )}
    </Layout>
  )
}

/**
 * `/openapi.json` for client generators, and `/docs`: a human-readable reference rendered on the
 * server (no scripts, no CDN, works offline). Both describe `app`, built once on first use.
 */
export function docsRoutes(config: Config, app: () => AnyElysia) {
  let document: Promise<Awaited<ReturnType<typeof buildOpenApiDocument>>> | undefined
  const spec = () => (document ??= buildOpenApiDocument(app(), config))
  return new Elysia({ name: 'docs' })
    .get('/openapi.json', async function openApiDocument() {
      return json(await spec(), 200, { 'cache-control': 'public, max-age=300' })
    })
    .get('/docs', async function apiReference() {
      return htmlPage(<ReferencePage spec={(await spec()) as unknown as Spec} />)
    })
}
