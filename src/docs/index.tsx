/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from '../config'
import { json } from '../lib/http'
import { buildOpenApiDocument } from './openapi'
import { Layout } from '../views/layout'
import { htmlPage, pageHeaders } from '../views/page'
import { currentSpeech, raw, t, th, type Locale } from '../i18n'
import { speechOf } from '../i18n/request'
import { referenceText } from './translations'

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

/** "a or b" in the reader's language (Intl.ListFormat, cached per locale: twelve at most). */
const orLists = new Map<Locale, Intl.ListFormat>()
function orList(items: string[]): string {
  const locale = currentSpeech().locale
  let f = orLists.get(locale)
  if (!f) orLists.set(locale, (f = new Intl.ListFormat(locale, { type: 'disjunction' })))
  return f.format(items)
}

/**
 * One of the reference's own texts (a summary, a description) in the reader's language, else as
 * the document states it, marked English (`lang="en"`) for screen readers and translators.
 */
function said(english: string | undefined): { text: string; lang: 'en' | undefined } {
  if (!english) return { text: '', lang: undefined }
  const words = referenceText(currentSpeech().locale, english)
  return words === undefined ? { text: english, lang: 'en' } : { text: words, lang: undefined }
}

/**
 * A protocol word (a type, where a parameter goes) in the reader's sentence: isolated (<bdi>), so
 * that in Arabic "string" and the comma after it keep their own directions.
 */
function Token(props: { text: string; required: boolean }): JSX.Element {
  const token = (
    <bdi dir="ltr" safe>
      {props.text}
    </bdi>
  )
  return <>{props.required ? th('docs.required', { what: raw(token) }) : token}</>
}

const typeOf = (s: Schema | undefined): string =>
  !s ? '' : s.anyOf ? s.anyOf.map(typeOf).join(' | ') : s.type === 'array' ? `${typeOf(s.items)}[]` : Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? 'any')

/** A form's or a JSON object's members: name, type, whether required, what it is. */
function Fields(props: { schema?: Schema }): JSX.Element {
  const schema = props.schema?.anyOf?.[0] ?? props.schema
  const members = Object.entries(schema?.properties ?? {})
  if (members.length === 0) return <></>
  return (
    <table class="admin reference">
      {members.map(([name, s]) => (
        <tr>
          <td>
            <code safe>{name}</code>
          </td>
          <td class="muted">
            <Token text={typeOf(s)} required={schema?.required?.includes(name) ?? false} />
          </td>
          <td class="long" lang={said(s.description).lang} safe>
            {said(s.description).text}
          </td>
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
            {orList(types)}
          </p>
          <Fields schema={media.schema} />
          {media.example !== undefined ? <pre tabindex="0" safe>{shown(media.example)}</pre> : ''}
          {Object.entries(media.examples ?? {}).map(([name, e]) => (
            <>
              <p class="muted" safe>
                {t('docs.example', { name: e.summary ? said(e.summary).text : name })}
              </p>
              <pre tabindex="0" safe>
                {shown(e.value)}
              </pre>
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
      {op.summary ? (
        <p lang={said(op.summary).lang} safe>
          {said(op.summary).text}
        </p>
      ) : (
        ''
      )}
      {op.description ? (
        <p class="muted" lang={said(op.description).lang} safe>
          {said(op.description).text}
        </p>
      ) : (
        ''
      )}
      {op.servers?.length ? <p class="muted" safe>{t('docs.servedAt', { urls: op.servers.map((s) => `${s.url}${s.description ? ` (${said(s.description).text})` : ''}`).join(', ') })}</p> : ''}
      {op.security?.length ? (
        <p class="muted" safe>
          {t('docs.auth', { schemes: orList(op.security.map((s) => Object.keys(s).join(' + ') || t('docs.authNone'))) })}
        </p>
      ) : (
        ''
      )}
      {op.parameters?.length ? (
        <>
          <p>
            <strong>{th('docs.parameters')}</strong>
          </p>
          <table class="admin reference">
            {op.parameters.map((p) => (
              <tr>
                <td>
                  <code safe>{p.name}</code>
                </td>
                <td class="muted">
                  <Token text={p.in} required={p.required ?? false} />
                </td>
                <td class="long" lang={said(p.description ?? p.schema?.description).lang} safe>
                  {said(p.description ?? p.schema?.description).text}
                </td>
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
            <strong>{th('docs.requestBody')}</strong>
          </p>
          <Content content={op.requestBody.content} />
        </>
      ) : (
        ''
      )}
      <p>
        <strong>{th('docs.responses')}</strong>
      </p>
      {Object.entries(op.responses ?? {}).map(([status, r]) => (
        <>
          <p>
            <strong safe>{status}</strong>{' '}
            <span lang={said(r.description).lang} safe>
              {said(r.description).text}
            </span>
          </p>
          {Object.keys(r.headers ?? {}).length ? <p class="muted" safe>{t('docs.headers', { names: Object.keys(r.headers!).join(', ') })}</p> : ''}
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
    <Layout title={t('docs.title')} wide>
      <h1 safe>{t('docs.heading', { name: `${spec.info.title} ${spec.info.version}` })}</h1>
      <p lang={said(spec.info.description).lang} safe>
        {said(spec.info.description).text}
      </p>
      <p>{th('docs.machineReadable', { link: raw(
            <bdi dir="ltr">
              <a href="/openapi.json">/openapi.json</a>
            </bdi>,
          ) })}</p>
      <nav>
        <ul>
          {operations.map(({ method, path, op }) => (
            <li>
              <a href={`#${anchor(method, path)}`}>
                <code safe>
                  {method.toUpperCase()} {path}
                </code>
              </a>{' '}
              <span class="muted" lang={said(op.summary).lang} safe>
                {said(op.summary).text}
              </span>
            </li>
          ))}
        </ul>
      </nav>
      {operations.map(({ method, path, op }) => (
        <OperationSection method={method} path={path} op={op} />
      ))}
      <h2>{th('docs.appReceives')}</h2>
      {webhooks.map(({ method, path, op }) => (
        <OperationSection method={method} path={t('docs.toTheApp', { name: path })} op={op} />
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
  const pages = new Map<string, string>()
  return new Elysia({ name: 'docs' })
    .get('/openapi.json', async function openApiDocument() {
      return json(await spec(), 200, { 'cache-control': 'public, max-age=300' })
    })
    .get('/docs', async function apiReference({ request }) {
      const speech = speechOf(config, request)
      const reference = (await spec()) as unknown as Spec
      // The page depends on the document (built once) and the speech alone: rendered once per language and address.
      const key = `${speech.locale}|${speech.here}`
      let body = pages.get(key)
      if (body === undefined) {
        body = await htmlPage(() => <ReferencePage spec={reference} />, { speech }).text()
        if (pages.size >= 64) pages.clear()
        pages.set(key, body)
      }
      return new Response(body, { headers: pageHeaders() })
    })
}
