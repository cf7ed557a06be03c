/**
 * `svc receipt verify TASK [--save FILE]`, or `svc receipt verify --bundle FILE`: a task's receipt
 * checked offline, each check named (the SDK's `verifyBundle`); exit 1 when any fails. The ledger's
 * log key is pinned in SVC_HOME (ledger.json) the first time it is read, and a bundle from a file
 * is checked against the pinned key (or, with none pinned yet, its own, which proves consistency only).
 */
import { readFile, writeFile } from 'node:fs/promises'
import type { ReceiptBundle } from '@svc/client'
import { verifyBundle } from '@svc/client/receipts'
import type { Command } from 'commander'
import { type Cli, usage } from '../cli.ts'
import { readHomeFile, writeHomeFile } from '../home.ts'
import type { Profile } from '../profile.ts'

const LEDGER_FILE = 'ledger.json'

/** A saved bundle: the ledger's, and what the rental named for the task. */
interface SavedReceipt {
  task_id: string
  leaf_hash: string | null
  bundle: ReceiptBundle
}

/** The log key pinned for this ledger, if one was. */
async function pinnedKey(profile: Profile): Promise<string | undefined> {
  const text = await readHomeFile(profile.home, LEDGER_FILE)
  const pins = text ? (JSON.parse(text) as Record<string, string>) : {}
  return pins[profile.urls.ledger]
}

async function pin(profile: Profile, key: string): Promise<void> {
  const text = await readHomeFile(profile.home, LEDGER_FILE)
  const pins = text ? (JSON.parse(text) as Record<string, string>) : {}
  if (pins[profile.urls.ledger] === key) return
  await writeHomeFile(
    profile.home,
    LEDGER_FILE,
    JSON.stringify({ ...pins, [profile.urls.ledger]: key }, null, 2),
  )
}

export function receiptCommands(program: Command, cli: Cli) {
  const receipt = program.command('receipt').description('a task’s receipt on the ledger')
  receipt
    .command('verify')
    .description(
      'check a task’s receipt offline: signature, leaf, checkpoint, inclusion (exit 1 on a failure)',
    )
    .argument('[task]', 'the task’s id')
    .option('--save <file>', 'also keep the receipt’s bundle in FILE (to check again offline)')
    .option('--bundle <file>', 'check a bundle kept with --save, with no network')
    .action(async (taskId: string | undefined, options: { save?: string; bundle?: string }) => {
      const profile = await cli.profile()
      let saved: SavedReceipt
      let logKey: string | undefined
      let keyNote = ''
      if (options.bundle) {
        try {
          saved = JSON.parse(await readFile(options.bundle, 'utf8')) as SavedReceipt
        } catch (err) {
          if (err instanceof SyntaxError) throw usage(`${options.bundle} is not a saved receipt (JSON).`)
          throw err
        }
        if (!saved?.bundle || typeof saved.task_id !== 'string')
          throw usage(`${options.bundle} is not a saved receipt.`)
        if (taskId && taskId !== saved.task_id)
          throw usage(`${options.bundle} is the receipt of ${saved.task_id}, not ${taskId}.`)
        logKey = await pinnedKey(profile)
        if (!logKey)
          keyNote = 'no log key is pinned here yet: the checkpoint is checked against the bundle’s own key'
      } else {
        if (!taskId)
          throw usage('Name the task (`svc receipt verify TASK`) or a saved bundle (--bundle FILE).')
        const client = profile.client
        cli.progress('Fetching the receipt’s bundle from the ledger…')
        const task = await client.withReceipt(taskId)
        saved = {
          task_id: task.id,
          leaf_hash: task.receipt!.leaf_hash,
          bundle: await client.bundle(task.receipt!.ledger_index!),
        }
        const served = await client.ledgerKey()
        logKey = (await pinnedKey(profile)) ?? served
        if (logKey !== served) keyNote = 'the ledger now serves another log key than the one pinned here'
        else await pin(profile, served)
        if (options.save)
          await writeFile(options.save, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 })
      }
      const verdict = verifyBundle(saved.bundle, {
        subject: saved.task_id,
        ...(logKey ? { logKey } : {}),
        ...(saved.leaf_hash ? { leafHash: saved.leaf_hash } : {}),
      })
      if (!verdict.ok) cli.exitCode = 1
      cli.out(
        {
          ok: verdict.ok,
          task_id: saved.task_id,
          index: verdict.index,
          checks: verdict.checks,
          ...(keyNote ? { note: keyNote } : {}),
        },
        () => [
          `Receipt of task ${saved.task_id}, entry ${verdict.index} of the ledger:`,
          ...verdict.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.check}: ${c.detail}`),
          ...(keyNote ? [`  note: ${keyNote}`] : []),
          verdict.ok ? 'Every check passed.' : 'The receipt does NOT verify.',
        ],
      )
    })
}
