import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'
import { GIF, PNG, WEBP, svg, writeFiles } from '../brand/fixtures'
import { etagOf } from '../../src/brand/config'

// Spawns CLI processes: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

/** SPEC "Brand and language": client create|update --logo-file PATH (PNG/WebP/SVG ≤ 256 KiB, by its bytes) and --launch-url URL. */
const files = writeFiles({
  'logo.png': PNG,
  'logo.svg': svg('Wiki'),
  'logo.webp': WEBP,
  'logo.gif': GIF,
  'big.png': Buffer.concat([PNG, Buffer.alloc(256 * 1024 + 1 - PNG.length)]),
})
const dir = dirname(files['logo.png']!)
const entry = `${import.meta.dir}/../../src/index.ts`
let databaseUrl: string

beforeAll(async () => {
  databaseUrl = testEngine === 'postgres' ? await freshPgDatabase() : `${dir}/latchkey.sqlite`
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function cli(args: string[]) {
  const proc = Bun.spawnSync(['bun', entry, ...args], { env: { PATH: process.env.PATH!, HOME: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }, stdin: 'ignore', cwd: dir })
  return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
}
const json = (args: string[]) => {
  const r = cli([...args, '--json'])
  expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' })
  return JSON.parse(r.out)
}
const refused = (args: string[], message: string) => {
  const r = cli(args)
  expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 2, out: '', err: `latchkey: ${message}\n` })
}

test('client create|update --logo-file and --launch-url: checked before anything is written, shown by list, removed with an empty value', () => {
  expect(cli(['migrate']).code).toBe(0)
  const web = ['client', 'create', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example/cb']
  refused([...web, '--logo-file', files['logo.gif']!], `--logo-file ${files['logo.gif']} is not a PNG, WebP or SVG file`)
  refused([...web, '--logo-file', files['big.png']!], `--logo-file ${files['big.png']} is 262145 bytes; at most 256 KiB`)
  refused([...web, '--logo-file', `${dir}/missing.png`], `--logo-file ${dir}/missing.png: ENOENT`)
  refused([...web, '--launch-url', 'http://wiki.example/'], '--launch-url: launch URL "http://wiki.example/" must be https (or http on localhost)')
  refused([...web, '--launch-url', 'javascript:alert(1)'], '--launch-url: launch URL "javascript:alert(1)" must be https (or http on localhost)')
  expect(json(['client', 'list'])).toEqual([])

  const made = json([...web, '--logo-file', files['logo.svg']!, '--launch-url', 'https://wiki.example/'])
  const svgTag = etagOf(svg('Wiki'))
  expect(made).toMatchObject({ name: 'Wiki', launch_url: 'https://wiki.example/', logo_url: `/assets/apps/${made.client_id}/logo?v=${svgTag}` })
  const id = made.client_id as string
  const [listed] = json(['client', 'list'])
  expect(listed).toMatchObject({ client_id: id, launch_url: 'https://wiki.example/', logo_url: `/assets/apps/${id}/logo?v=${svgTag}` })

  // Update: a new logo is a new version; the same file again changes nothing.
  const updated = json(['client', 'update', id, '--logo-file', files['logo.png']!, '--launch-url', 'http://localhost:8080/'])
  expect(updated).toMatchObject({ launch_url: 'http://localhost:8080/', logo_url: `/assets/apps/${id}/logo?v=${etagOf(PNG)}` })
  const same = cli(['client', 'update', id, '--logo-file', files['logo.png']!])
  expect([same.code, same.out]).toEqual([0, `nothing to change: client ${id} already has these options\n`])
  refused(['client', 'update', id, '--logo-file', files['logo.gif']!], `--logo-file ${files['logo.gif']} is not a PNG, WebP or SVG file`)
  expect(json(['client', 'list'])[0]).toMatchObject({ logo_url: `/assets/apps/${id}/logo?v=${etagOf(PNG)}` })

  const removed = json(['client', 'update', id, '--logo-file', '', '--launch-url', ''])
  expect([removed.logo_url, removed.launch_url]).toEqual([undefined, undefined])
  refused([...web, '--logo-file', ''], "--logo-file and --launch-url need a value on create ('' removes one on update)")
  expect(json(['client', 'update', id, '--logo-file', files['logo.webp']!]).logo_url).toBe(`/assets/apps/${id}/logo?v=${etagOf(WEBP)}`)
})
