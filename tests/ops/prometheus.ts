/**
 * A small strict reader of Prometheus' text exposition format (0.0.4): HELP and TYPE lines,
 * then samples `name{label="value",…} number`. Anything else is an error, so a malformed
 * exposition fails the test that reads it.
 */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?(?:\d+(?:\.\d+)?(?:e[+-]?\d+)?|\+Inf|-Inf|NaN))$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y

export function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue
    if (line.startsWith('# HELP ')) continue
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ')
      if (!name || !['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type ?? '')) throw new Error(`line ${i + 1}: bad TYPE: ${line}`)
      types.set(name, type!)
      continue
    }
    const m = SAMPLE.exec(line)
    if (!m) throw new Error(`line ${i + 1}: not a sample: ${line}`)
    const labels: Record<string, string> = {}
    if (m[2]) {
      LABEL.lastIndex = 0
      let pos = 0
      while (pos < m[2].length) {
        LABEL.lastIndex = pos
        const l = LABEL.exec(m[2])
        if (!l) throw new Error(`line ${i + 1}: bad labels: ${m[2]}`)
        labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
        pos = LABEL.lastIndex
      }
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]!.replace('+Inf', 'Infinity').replace('-Inf', '-Infinity')) })
  }
  return { samples, types }
}

/** The value of the sample with this name and these labels (all of them given), or 0. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return find(samples, name, labels)?.value ?? 0
}

/** The value of the sample with this name and these labels, which must be there: a missing metric is no 0. */
export function presentValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = find(samples, name, labels)
  if (!found) throw new Error(`no sample ${name}${JSON.stringify(labels)}`)
  return found.value
}

function find(samples: Sample[], name: string, labels: Record<string, string>): Sample | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
}
