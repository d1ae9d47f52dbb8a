import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ApplyError, exportState, parseDocument, planApply } from '../admin/declarative'
import { escapeForTerminal } from '../lib/text'
import { toYaml } from '../lib/yaml'
import { UsageError, cliAudit, linkConfig, parse, printJson, withStore } from './common'

/**
 * `latchkey apply FILE [--dry-run] [--prune]`: the database made to match the file (YAML or
 * JSON). Every error of the file is printed, one line each with its path, and nothing changes.
 */
export async function applyCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { 'dry-run': { type: 'boolean' }, prune: { type: 'boolean' } }, 1)
  const file = positionals[0]
  if (!file) throw new UsageError('usage: latchkey apply FILE [--dry-run] [--prune]')
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    throw new UsageError(`cannot read ${escapeForTerminal(file)}`)
  }
  // One transaction: the plan is made from what the database holds in it, and every change of
  // the plan (and its audit event) commits together — or, on any failure, none does.
  await withStore(async (store, config) => {
    const links = await linkConfig(store, config)
    try {
      const out = await store.transaction(async () => {
        const plan = await planApply(store, links, parseDocument(text, file), { prune: values.prune ?? false, baseDir: dirname(resolve(file)), now: Date.now() })
        const lines = plan.lines.map((line) => `${escapeForTerminal(line)}\n`)
        if (plan.lines.length === 0) return [...lines, 'nothing to change\n']
        if (values['dry-run']) return [...lines, `${plan.lines.length} change(s) planned (dry run: nothing changed)\n`]
        for (const line of await plan.apply()) lines.push(`${escapeForTerminal(line)}\n`)
        await cliAudit(store, 'config.applied', { detail: { changes: plan.lines.length, prune: values.prune ?? false } })
        return [...lines, `applied ${plan.lines.length} change(s)\n`]
      })
      process.stdout.write(out.join(''))
    } catch (error) {
      if (!(error instanceof ApplyError)) throw error
      for (const line of error.errors) process.stderr.write(`latchkey: ${escapeForTerminal(line)}\n`)
      throw new UsageError(`${file}: ${error.errors.length} error(s); nothing changed`)
    }
  })
}

/** `latchkey export [--json]`: the database in `apply`'s shape, without secrets — YAML, or JSON. */
export async function exportCommand(args: string[]): Promise<void> {
  const { values } = parse(args, { json: { type: 'boolean' } }, 0)
  const state = await withStore((store) => exportState(store))
  if (values.json) printJson(state)
  else process.stdout.write(toYaml(state))
}
