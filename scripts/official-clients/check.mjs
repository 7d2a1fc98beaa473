// Drives the official JavaScript client (npm `ollama`) against `passk serve-stub`.
//
// Usage: node check.mjs HOST ROOT   (HOST: http://127.0.0.1:PORT; ROOT: a passk data root), run
// from a copy beside the node_modules that holds `ollama`.
//
// Every request a real Ollama v0.33 accepts must be accepted, and every request it refuses must
// reject with the client's ResponseError carrying Ollama's status and text. Exits 1 on a mismatch.
import { Ollama } from 'ollama'
import fs from 'fs'

const [host, root] = process.argv.slice(2)
const c = new Ollama({ host })
const tools = JSON.parse(fs.readFileSync(`${root}/tasks/store/tools/bare.json`)).tools
const first = JSON.parse(fs.readFileSync(`${root}/tasks/store/conversations.json`))[0].customer[0]
const msg = [{ role: 'user', content: first }]
const failed = []

async function collect (stream) {
  const out = []
  for await (const chunk of await stream) out.push(chunk)
  return out
}

async function accepted (label, call, check) {
  let out
  try {
    out = await call()
  } catch (e) {
    failed.push(label)
    console.log(`FAIL ${label}: refused: ${e.name}: ${e.message}`)
    return
  }
  if (check(out)) {
    console.log(`ok   ${label}`)
  } else {
    failed.push(label)
    console.log(`FAIL ${label}: unexpected answer: ${JSON.stringify(out).slice(0, 300)}`)
  }
}

async function refused (label, call, status, text) {
  let out
  try {
    out = await call()
  } catch (e) {
    if (e.status_code === status && String(e.error ?? e.message).includes(text)) {
      console.log(`ok   ${label}: ${status} ${e.error ?? e.message}`)
    } else {
      failed.push(label)
      console.log(`FAIL ${label}: got ${e.status_code} ${e.error ?? e.message}, want ${status} ${text}`)
    }
    return
  }
  failed.push(label)
  console.log(`FAIL ${label}: accepted: ${JSON.stringify(out).slice(0, 300)}`)
}

await accepted('list', async () => (await c.list()).models.map(m => m.model),
  names => names.includes('oracle:latest') && names.includes('messy-pythonic:latest'))
await accepted('show', async () => (await c.show({ model: 'llama3.2' })).capabilities,
  caps => caps.includes('tools'))
await accepted('pull', async () => (await c.pull({ model: 'llama3.2' })).status, s => s === 'success')
await accepted('pull streamed', () => collect(c.pull({ model: 'myns/tiny:1b', stream: true })),
  parts => parts.at(-1).status === 'success')
await accepted('chat with tools', () => c.chat({ model: 'llama3.2', messages: msg, tools }),
  r => r.message.tool_calls?.length > 0)
await accepted('chat with tools, streamed',
  () => collect(c.chat({ model: 'llama3.2', messages: msg, tools, stream: true })),
  chunks => chunks.some(ch => ch.message.tool_calls?.length > 0) && chunks.at(-1).done)
await accepted('think', () => c.chat({ model: 'thinking', messages: msg, tools, think: true }),
  r => Boolean(r.message.thinking))
await accepted('think level, streamed',
  () => collect(c.chat({ model: 'thinking', messages: msg, tools, stream: true, think: 'high' })),
  chunks => Boolean(chunks[0].message.thinking))
for (const ka of [600, 1.5, '15m', '-1m']) {
  await accepted(`keep_alive ${JSON.stringify(ka)}`,
    () => c.chat({ model: 'oracle', messages: msg, tools, keep_alive: ka }),
    r => r.done_reason === 'stop')
}
await accepted('format json', () => c.chat({ model: 'oracle', messages: msg, format: 'json' }),
  r => typeof JSON.parse(r.message.content) === 'object')
await accepted('num_predict',
  () => c.chat({ model: 'oracle', messages: msg, tools, options: { num_predict: 3 } }),
  r => r.done_reason === 'length' && r.eval_count === 3)
await accepted('ps', async () => (await c.ps()).models.map(m => m.model),
  names => names.includes('oracle:latest'))
await accepted('a tool round trip with thinking in the history', async () => {
  const r = await c.chat({ model: 'thinking', messages: msg, tools })
  const name = r.message.tool_calls[0].function.name
  const history = [...msg, r.message, { role: 'tool', tool_name: name, content: '{"ok": true}' }]
  return c.chat({ model: 'thinking', messages: history, tools })
}, r => Boolean(r.message.tool_calls?.length || r.message.content))
await accepted('unload', () => c.chat({ model: 'oracle', messages: [], keep_alive: 0 }),
  r => r.done_reason === 'unload')

await refused("keep_alive '600'", () => c.chat({ model: 'oracle', messages: msg, keep_alive: '600' }),
  400, 'time: missing unit in duration "600"')
await refused("keep_alive 'forever'",
  () => c.chat({ model: 'oracle', messages: msg, keep_alive: 'forever' }),
  400, 'time: invalid duration "forever"')
await refused('think on a model without thinking',
  () => c.chat({ model: 'oracle', messages: msg, think: true }),
  400, '"oracle" does not support thinking')
await refused('think on a model without thinking, streamed',
  () => collect(c.chat({ model: 'oracle', messages: msg, think: true, stream: true })),
  400, '"oracle" does not support thinking')
await refused('tools on a model without tools',
  () => c.chat({ model: 'no-tools', messages: msg, tools }),
  400, 'registry.ollama.ai/library/no-tools:latest does not support tools')
await refused('an option of the wrong type',
  () => c.chat({ model: 'oracle', messages: msg, options: { temperature: 'hot' } }),
  500, 'option "temperature" must be of type float32')
await refused('a conversation the stub does not know',
  () => c.chat({ model: 'oracle', messages: [{ role: 'user', content: 'hello?' }] }),
  409, 'restart `passk serve-stub`')

const manifest = new URL('node_modules/ollama/package.json', import.meta.url)
const version = JSON.parse(fs.readFileSync(manifest)).version
console.log(`npm ollama ${version}: ${failed.length} mismatches`)
process.exit(failed.length ? 1 : 0)
