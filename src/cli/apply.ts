import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ApplyError, exportState, parseDocument, planApply } from '../admin/declarative'
import { escapeForTerminal } from '../lib/text'
import { toYaml } from '../lib/yaml'
import { command } from './command'
import { UsageError, cliAudit, linkConfig, printJson, withStore } from './common'

/**
 * `latchkey apply FILE [--dry-run] [--prune]`: the database made to match the file (YAML or
 * JSON). Every error of the file is printed, one line each with its path, and nothing changes.
 */
export const applyCommand = command({
  name: 'apply',
  args: 'FILE',
  positionals: 1,
  summary: 'make the database match a YAML or JSON file',
  detail: 'Without --prune it only adds and changes. An invalid file changes nothing and prints one line per error.',
  options: {
    'dry-run': { type: 'boolean', help: 'print the plan, change nothing' },
    prune: { type: 'boolean', help: "delete what the file's sections do not list" },
  },
  examples: ['apply latchkey.yaml --dry-run', 'apply latchkey.yaml --prune'],
  json: '{changes: [line…], applied, dry_run, output: [secrets and invitation links, shown once]}',
  async run({ values, positionals, json }) {
    const file = positionals[0]
    if (!file) throw new UsageError('apply needs a FILE; see latchkey apply --help')
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      throw new UsageError(`cannot read ${escapeForTerminal(file)}`)
    }
    const dryRun = values['dry-run'] ?? false
    // One transaction: the plan is made from what the database holds in it, and every change of
    // the plan (and its audit event) commits together — or, on any failure, none does.
    await withStore(async (store, config) => {
      const links = await linkConfig(store, config)
      try {
        const result = await store.transaction(async () => {
          const plan = await planApply(store, links, parseDocument(text, file), { prune: values.prune ?? false, baseDir: dirname(resolve(file)), now: Date.now() })
          if (plan.lines.length === 0 || dryRun) return { changes: plan.lines, applied: false, output: [] as string[] }
          const output = await plan.apply()
          await cliAudit(store, 'config.applied', { detail: { changes: plan.lines.length, prune: values.prune ?? false } })
          return { changes: plan.lines, applied: true, output }
        })
        if (json) return printJson({ changes: result.changes, applied: result.applied, dry_run: dryRun, output: result.output })
        const lines = [...result.changes, ...result.output].map((line) => `${escapeForTerminal(line)}\n`)
        if (result.changes.length === 0) lines.push('nothing to change\n')
        else if (!result.applied) lines.push(`${result.changes.length} change(s) planned (dry run: nothing changed)\n`)
        else lines.push(`applied ${result.changes.length} change(s)\n`)
        process.stdout.write(lines.join(''))
      } catch (error) {
        if (!(error instanceof ApplyError)) throw error
        for (const line of error.errors) process.stderr.write(`latchkey: ${escapeForTerminal(line)}\n`)
        throw new UsageError(`${file}: ${error.errors.length} error(s); nothing changed`)
      }
    })
  },
})

/** `latchkey export [--json]`: the database in `apply`'s shape, without secrets — YAML, or JSON. */
export const exportCommand = command({
  name: 'export',
  summary: "the database in apply's shape (YAML), without secrets",
  options: {},
  examples: ['export > latchkey.yaml', 'export --json'],
  json: 'the same as JSON',
  async run({ json }) {
    const state = await withStore((store) => exportState(store))
    if (json) printJson(state)
    else process.stdout.write(toYaml(state))
  },
})
