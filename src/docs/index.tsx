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

type Schema = { type?: string | string[]; description?: string; properties?: Record<string, Schema>; required?: string[]; items?: Schema; anyOf?: Schema[]; const?: unknown; format?: string }
interface Media {
  schema?: Schema
  example?: unknown
  examples?: Record<string, { summary?: string; value: unknown }>
}
interface Operation {
  summary?: string
  description?: string
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: Schema }>
  requestBody?: { content?: Record<string, Media> }
  responses?: Record<string, { description?: string; headers?: Record<string, { description?: string }>; content?: Record<string, Media> }>
  security?: Array<Record<string, unknown>>
  servers?: Array<{ url: string; description?: string }>
}
type Spec = {
  info: { title: string; version: string; description?: string }
  paths: Record<string, Record<string, Operation>>
  webhooks?: Record<string, Record<string, Operation>>
}

const typeOf = (s: Schema | undefined): string =>
  !s ? '' : s.anyOf ? s.anyOf.map(typeOf).join(' | ') : s.type === 'array' ? `${typeOf(s.items)}[]` : Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? 'any')

/** A form's or a JSON object's members: name, type, whether required, what it is. */
function Fields(props: { schema?: Schema }): JSX.Element {
  const schema = props.schema?.anyOf?.[0] ?? props.schema
  const members = Object.entries(schema?.properties ?? {})
  if (members.length === 0) return <></>
  return (
    <table class="admin">
      {members.map(([name, s]) => (
        <tr>
          <td>
            <code safe>{name}</code>
          </td>
          <td class="muted" safe>
            {typeOf(s)}
            {schema?.required?.includes(name) ? ', required' : ''}
          </td>
          <td safe>{s.description ?? ''}</td>
        </tr>
      ))}
    </table>
  )
}

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2))

/** Media types that say the same (a form or JSON with one schema) are shown once. */
function sameShown(content: Record<string, Media>): Array<[string[], Media]> {
  const groups = new Map<string, [string[], Media]>()
  for (const [type, media] of Object.entries(content)) {
    const key = JSON.stringify(media)
    const group = groups.get(key)
    if (group) group[0].push(type)
    else groups.set(key, [[type], media])
  }
  return [...groups.values()]
}

/** Each media type's members and examples. */
function Content(props: { content?: Record<string, Media> }): JSX.Element {
  return (
    <>
      {sameShown(props.content ?? {}).map(([types, media]) => (
        <>
          <p class="muted" safe>
            {types.join(' or ')}
          </p>
          <Fields schema={media.schema} />
          {media.example !== undefined ? <pre safe>{shown(media.example)}</pre> : ''}
          {Object.entries(media.examples ?? {}).map(([name, e]) => (
            <>
              <p class="muted" safe>
                Example “{e.summary ?? name}”
              </p>
              <pre safe>{shown(e.value)}</pre>
            </>
          ))}
        </>
      ))}
    </>
  )
}

const anchor = (method: string, path: string) => `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-')

function OperationSection(props: { method: string; path: string; op: Operation }): JSX.Element {
  const { method, path, op } = props
  return (
    <section id={anchor(method, path)}>
      <h2>
        <code safe>
          {method.toUpperCase()} {path}
        </code>
      </h2>
      {op.summary ? <p safe>{op.summary}</p> : ''}
      {op.description ? <p class="muted" safe>{op.description}</p> : ''}
      {op.servers?.length ? <p class="muted" safe>Served at: {op.servers.map((s) => `${s.url}${s.description ? ` (${s.description})` : ''}`).join(', ')}</p> : ''}
      {op.security?.length ? (
        <p class="muted" safe>
          Auth: {op.security.map((s) => Object.keys(s).join(' + ') || 'none').join(' or ')}
        </p>
      ) : (
        ''
      )}
      {op.parameters?.length ? (
        <>
          <p>
            <strong>Parameters</strong>
          </p>
          <table class="admin">
            {op.parameters.map((p) => (
              <tr>
                <td>
                  <code safe>{p.name}</code>
                </td>
                <td class="muted" safe>
                  {p.in}
                  {p.required ? ', required' : ''}
                </td>
                <td safe>{p.description ?? p.schema?.description ?? ''}</td>
              </tr>
            ))}
          </table>
        </>
      ) : (
        ''
      )}
      {op.requestBody?.content ? (
        <>
          <p>
            <strong>Request body</strong>
          </p>
          <Content content={op.requestBody.content} />
        </>
      ) : (
        ''
      )}
      <p>
        <strong>Responses</strong>
      </p>
      {Object.entries(op.responses ?? {}).map(([status, r]) => (
        <>
          <p>
            <strong safe>{status}</strong> <span safe>{r.description ?? ''}</span>
          </p>
          {Object.keys(r.headers ?? {}).length ? <p class="muted" safe>Headers: {Object.keys(r.headers!).join(', ')}</p> : ''}
          <Content content={r.content} />
        </>
      ))}
    </section>
  )
}

function ReferencePage(props: { spec: Spec }): JSX.Element {
  const { spec } = props
  const operations = Object.entries(spec.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, op })))
  const webhooks = Object.entries(spec.webhooks ?? {}).flatMap(([name, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path: name, op })))
  return (
    <Layout title="API reference" wide>
      <h1 safe>
        {spec.info.title} {spec.info.version} — API reference
      </h1>
      <p safe>{spec.info.description}</p>
      <p>
        Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1), for client generators.
      </p>
      <nav>
        <ul>
          {operations.map(({ method, path, op }) => (
            <li>
              <a href={`#${anchor(method, path)}`}>
                <code safe>
                  {method.toUpperCase()} {path}
                </code>
              </a>{' '}
              <span class="muted" safe>
                {op.summary ?? ''}
              </span>
            </li>
          ))}
        </ul>
      </nav>
      {operations.map(({ method, path, op }) => (
        <OperationSection method={method} path={path} op={op} />
      ))}
      <h2>What an app receives</h2>
      {webhooks.map(({ method, path, op }) => (
        <OperationSection method={method} path={`(to the app) ${path}`} op={op} />
      ))}
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
