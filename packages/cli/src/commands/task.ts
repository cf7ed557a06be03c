/**
 * `svc task run ENGAGEMENT TEXT [--async] [--timeout SECONDS] [--file PATH]…`, `svc task get ID`,
 * `svc tasks`. A run follows the task's event stream (progress on stderr) and then writes its output
 * on stdout; a later task's escrow is signed with the local key, as the SDK's `runTask` does. After
 * `--timeout` it stops waiting (the task goes on) and exits with STILL_RUNNING_EXIT.
 */
import { readFile } from 'node:fs/promises'
import { basename, extname } from 'node:path'
import { ok, signBody, type SvcClient, SvcError, type Task, TERMINAL_STATES } from '@svc/client'
import type { Command } from 'commander'
import { type Cli, usage } from '../cli.ts'
import type { Profile } from '../profile.ts'
import { columns, money, stateWords, when } from '../format.ts'

const TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
}

async function upload(client: SvcClient, engagementId: string, path: string): Promise<string> {
  const bytes = await readFile(path)
  const stored = await ok(
    client.api.POST('/api/engagements/{id}/files', {
      params: { path: { id: engagementId }, query: { name: basename(path) } },
      body: bytes as never,
      bodySerializer: (body: unknown) => body as Uint8Array,
      headers: { 'content-type': TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream' },
    }),
  )
  return stored.id
}

/** The exit code of `svc task run --timeout` when the task has not ended by then (1 failed, 2 wrong input). */
export const STILL_RUNNING_EXIT = 3

interface RunOptions {
  async?: boolean
  /** seconds */
  timeout?: number
  file: string[]
}

/** `--timeout`'s seconds: a positive number. */
function seconds(value: string): number {
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw usage(`A timeout is a number of seconds above 0, not “${value}”.`)
  return n
}

/** A task as a person reads it (names first, the id after). */
export function taskLines(task: Task): string[] {
  const who = [task.agent_name ?? task.agent_did, task.job_title ? `for “${task.job_title}”` : '']
  return [
    `${who.filter(Boolean).join(' ')}: ${stateWords(task.state)}, ${money(task.price_fils, task.currency)}`,
    `  task ${task.id}, engagement ${task.engagement_id ?? '-'}, ${when(task.created_at)}`,
    ...(task.error ? [`  error: ${task.error}`] : []),
    ...(task.receipt?.ledger_index !== null && task.receipt?.ledger_index !== undefined
      ? [`  receipt on the ledger at ${task.receipt.ledger_index}`]
      : []),
  ]
}

/** The text a task produced (or its data as JSON). */
const outputOf = (task: Task) =>
  task.output?.text ?? (task.output?.data !== undefined ? JSON.stringify(task.output.data, null, 2) : '')

async function run(cli: Cli, profile: Profile, engagementId: string, text: string, options: RunOptions) {
  const client = profile.client
  const fileIds: string[] = []
  for (const path of options.file) {
    cli.progress(`Uploading ${basename(path)}…`)
    fileIds.push(await upload(client, engagementId, path))
  }
  const created = await ok(
    client.api.POST('/api/tasks', {
      body: {
        engagement_id: engagementId,
        text,
        async: true,
        ...(fileIds.length ? { file_ids: fileIds } : {}),
      },
    }),
  )
  const escrow = created.escrow as { state: string; hash: string; body: unknown; amount_fils?: number } | null
  if (escrow?.state === 'offered') {
    // a later task comes with its own escrow: signed with the key, or the task is not paid for
    const key = await profile.key()
    cli.progress(`Signing the task’s escrow${escrow.amount_fils ? ` of ${money(escrow.amount_fils)}` : ''}…`)
    await ok(
      client.api.POST('/api/engagements/{id}/signatures', {
        params: { path: { id: engagementId } },
        body: { escrow_signatures: [{ escrow_hash: escrow.hash, signature: await signBody(key, escrow) }] },
      }),
    )
  }
  const id = created.task.id
  if (options.async) {
    cli.out({ task: created.task }, () => [
      `Task ${id} is ${stateWords(created.task.state)}.`,
      `Follow it: svc task get ${id}`,
    ])
    return
  }
  cli.progress(
    `${created.task.agent_name ?? 'The agent'} has the task (${id}): ${stateWords(created.task.state)}`,
  )
  const waited = new AbortController()
  const timer =
    options.timeout === undefined ? undefined : setTimeout(() => waited.abort(), options.timeout * 1000)
  try {
    for await (const event of client.events(id, { signal: waited.signal })) {
      if (event.type === 'task.state_changed') cli.progress(`  → ${stateWords(String(event.data.to))}`)
      else if (event.type === 'task.trace')
        cli.progress(`  · ${String(event.data.message ?? event.data.text ?? JSON.stringify(event.data))}`)
    }
  } catch (err) {
    if (!waited.signal.aborted) throw err
  } finally {
    clearTimeout(timer)
  }
  const task = await client.task(id)
  if (!TERMINAL_STATES.includes(task.state)) {
    if (!waited.signal.aborted) throw new SvcError('task_not_ended', 0, `task ${id} is ${task.state}`)
    // the wait ended, not the task: it goes on at the agent
    cli.exitCode = STILL_RUNNING_EXIT
    if (cli.json) cli.out({ task, still_running: true }, () => '')
    process.stderr.write(
      `svc: Task ${id} is still running (${stateWords(task.state)}) after ${options.timeout} s; it was not stopped. See it later with \`svc task get ${id}\`.\n`,
    )
    return
  }
  if (cli.json) cli.out({ task }, () => '')
  else if (task.state === 'completed') process.stdout.write(`${outputOf(task).replace(/\n?$/, '\n')}`)
  if (task.state !== 'completed') {
    cli.exitCode = 1
    if (!cli.json)
      process.stderr.write(`svc: The task ${stateWords(task.state)}${task.error ? `: ${task.error}` : ''}.\n`)
  }
}

export function taskCommands(program: Command, cli: Cli) {
  const task = program.command('task').description('run a task with an engagement, or look one up')

  task
    .command('run')
    .description('run a task: its progress on stderr, then its output on stdout')
    .argument('<engagement>', 'the engagement’s id (from `svc hire`)')
    .argument('<text>', 'what to ask (“-” reads it from stdin)')
    .option('--async', 'answer at once with the task’s id, without waiting')
    .option(
      '--timeout <seconds>',
      `stop waiting after this long: the task goes on, the command to see it is shown, exit code ${STILL_RUNNING_EXIT}`,
      seconds,
    )
    .option(
      '--file <path>',
      'a file for the task (again for more)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .addHelpText(
      'after',
      `\nExit codes: 0 completed, 1 the task failed (or a service did), 2 wrong input, ${STILL_RUNNING_EXIT} still running after --timeout.`,
    )
    .action(async (engagementId: string, text: string, options: RunOptions) => {
      if (options.async && options.timeout !== undefined)
        throw usage('A timeout is for waiting on the task: leave --timeout out with --async.')
      const input = text === '-' ? await readStdin() : text
      if (!input.trim()) throw usage('The task’s text is empty.')
      await run(cli, await cli.profile(), engagementId, input, options)
    })

  task
    .command('get')
    .description('a task: its state, price and output')
    .argument('<id>', 'the task’s id')
    .action(async (id: string) => {
      const found = await (await cli.profile()).client.task(id)
      cli.out({ task: found }, () => {
        const output = outputOf(found)
        return [...taskLines(found), ...(output ? ['', output] : [])]
      })
    })

  program
    .command('tasks')
    .description('your latest tasks')
    .option('--limit <n>', 'how many', '20')
    .action(async (options: { limit: string }) => {
      const limit = Math.min(Math.max(Number.parseInt(options.limit, 10) || 20, 1), 100)
      const { tasks } = await ok(
        (await cli.profile()).client.api.GET('/api/tasks', {
          params: { query: { limit, offset: 0, lang: 'en' } },
        }),
      )
      cli.out({ tasks }, () =>
        tasks.length
          ? columns([
              ['when', 'job', 'agent', 'state', 'price', 'task'],
              ...tasks.map((t) => [
                when(t.created_at),
                t.job_title ?? '-',
                t.agent_name ?? t.agent_did,
                stateWords(t.state),
                money(t.price_fils, t.currency),
                t.id,
              ]),
            ])
          : 'No tasks yet.',
      )
    })
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
