/**
 * `svc task run ENGAGEMENT TEXT [--async] [--file PATH]…`, `svc task get ID`, `svc tasks`. A run
 * follows the task's event stream (progress on stderr) and then writes its output on stdout; a later
 * task's escrow is signed with the local key, as the SDK's `runTask` does.
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

async function run(
  cli: Cli,
  profile: Profile,
  engagementId: string,
  text: string,
  options: { async?: boolean; file: string[] },
) {
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
  for await (const event of client.events(id)) {
    if (event.type === 'task.state_changed') cli.progress(`  → ${stateWords(String(event.data.to))}`)
    else if (event.type === 'task.trace')
      cli.progress(`  · ${String(event.data.message ?? event.data.text ?? JSON.stringify(event.data))}`)
  }
  const task = await client.task(id)
  if (!TERMINAL_STATES.includes(task.state))
    throw new SvcError('task_not_ended', 0, `task ${id} is ${task.state}`)
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
      '--file <path>',
      'a file for the task (again for more)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .action(async (engagementId: string, text: string, options: { async?: boolean; file: string[] }) => {
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
