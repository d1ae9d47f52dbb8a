import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ApplyError, exportState, parseDocument, planApply } from '../admin/declarative'
import { escapeForTerminal } from '../lib/text'
import { UsageError, cliAudit, parse, printJson, withStore } from './common'

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
  await withStore(async (store, config) => {
    try {
      const plan = await planApply(store, config, parseDocument(text, file), { prune: values.prune ?? false, baseDir: dirname(resolve(file)), now: Date.now() })
      for (const line of plan.lines) process.stdout.write(`${escapeForTerminal(line)}\n`)
      if (plan.lines.length === 0) return void process.stdout.write('nothing to change\n')
      if (values['dry-run']) return void process.stdout.write(`${plan.lines.length} change(s) planned (dry run: nothing changed)\n`)
      for (const line of await plan.apply()) process.stdout.write(`${escapeForTerminal(line)}\n`)
      await cliAudit(store, 'config.applied', { detail: { changes: plan.lines.length, prune: values.prune ?? false } })
      process.stdout.write(`applied ${plan.lines.length} change(s)\n`)
    } catch (error) {
      if (!(error instanceof ApplyError)) throw error
      for (const line of error.errors) process.stderr.write(`latchkey: ${escapeForTerminal(line)}\n`)
      throw new UsageError(`${file}: ${error.errors.length} error(s); nothing changed`)
    }
  })
}

/** `latchkey export`: the database in `apply`'s shape, without secrets. */
export async function exportCommand(args: string[]): Promise<void> {
  parse(args, {}, 0)
  printJson(await withStore((store) => exportState(store)))
}
