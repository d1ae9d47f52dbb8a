import { terminalSafeJson } from './text'

/**
 * JSON-shaped data (mappings, lists, strings, numbers, booleans, null) as block-style YAML, for
 * `latchkey export`. Bun.YAML.stringify would leave C1 controls and bidirectional overrides raw in
 * a name or email; here a string is written plain only when it is short of every YAML pitfall (a
 * leading indicator or digit, `: `, ` #`, words YAML 1.1 reads as booleans or null, anything not
 * printable ASCII), else as a JSON string — valid YAML (1.2 is a superset of JSON) with every
 * control or invisible character as a `\u` escape, so it reads back the same and is safe in a terminal.
 */
const PLAIN = /^[A-Za-z_/][\w .\/@:+=~?&%()',-]*$/
const KEYWORD = /^(?:true|false|yes|no|on|off|y|n|null)$/i

function scalar(value: unknown): string {
  if (typeof value === 'string')
    return PLAIN.test(value) && !KEYWORD.test(value) && !value.includes(': ') && !value.includes(' #') && !value.endsWith(':') && !value.endsWith(' ') ? value : terminalSafeJson(value)
  return value === null || value === undefined ? 'null' : String(value)
}

const isBranch = (value: unknown): value is object => typeof value === 'object' && value !== null && Object.keys(value).length > 0
const inline = (value: unknown) => (Array.isArray(value) ? '[]' : typeof value === 'object' && value !== null ? '{}' : scalar(value))

/** The lines of a mapping or list nested at `indent`. */
function block(value: object, indent: string): string[] {
  const lines: string[] = []
  if (Array.isArray(value))
    for (const item of value) {
      if (!isBranch(item)) lines.push(`${indent}- ${inline(item)}`)
      else {
        const nested = block(item, indent + '  ')
        lines.push(`${indent}- ${nested[0]!.slice(indent.length + 2)}`, ...nested.slice(1))
      }
    }
  else
    for (const [key, item] of Object.entries(value)) {
      if (isBranch(item)) lines.push(`${indent}${scalar(key)}:`, ...block(item, indent + '  '))
      else lines.push(`${indent}${scalar(key)}: ${inline(item)}`)
    }
  return lines
}

export function toYaml(value: Record<string, unknown>): string {
  return block(value, '').map((line) => `${line}\n`).join('')
}
