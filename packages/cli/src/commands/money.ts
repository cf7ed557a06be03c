/**
 * `svc release ENGAGEMENT [--all] [--yes]`: pays completed tasks' escrows, each release instruction
 * shown in the console's words and signed with the local key (sent again after a lost answer, it
 * pays once). `svc statement [--from --to] [--csv]`: the wallet's movements over a period.
 */
import { ok, type RentalPaths, SvcError } from '@svc/client'
import type { Command } from 'commander'
import { summary } from '../agreement.ts'
import { type Cli, usage } from '../cli.ts'
import { columns, money, when } from '../format.ts'
import { askConfirm } from '../ui.ts'

type Statement = Exclude<
  NonNullable<RentalPaths['/api/statements']['get']['responses'][200]['content']['application/json']>,
  string
>

const KIND_WORDS: Record<string, string> = {
  funding: 'top-up',
  escrow_hold: 'held for a task',
  release: 'paid to the agent',
  fee: 'platform fee',
  vat: 'VAT',
  refund: 'refund',
  adjustment: 'adjustment',
}

export function moneyCommands(program: Command, cli: Cli) {
  program
    .command('release')
    .description('pay the agent for completed tasks of an engagement (the oldest first; --all for every one)')
    .argument('<engagement>', 'the engagement’s id')
    .option('--all', 'every completed task waiting for its payment')
    .option('--yes', 'sign without asking')
    .action(async (engagementId: string, options: { all?: boolean; yes?: boolean }) => {
      const profile = await cli.profile()
      if (!options.yes && !profile.interactive)
        throw usage('A release pays the agent: add --yes to sign it without being asked.')
      const { engagement } = await ok(
        profile.client.api.GET('/api/engagements/{id}', {
          params: { path: { id: engagementId }, query: { lang: 'en' } },
        }),
      )
      const names = {
        job_title: engagement.job_title,
        agent_name: engagement.agent_name,
        provider_name: engagement.provider_name,
      }
      const signer = await profile.signer()
      const paid: Array<{ task_id: string | null; amount: string; transfer_id: string; escrow_id: string }> =
        []
      for (;;) {
        let prepared
        try {
          prepared = await signer.prepareRelease(engagementId)
        } catch (err) {
          if (err instanceof SvcError && err.is('nothing_to_release')) break
          throw err
        }
        const { releases } = await signer.pending(engagementId)
        const instruction = releases.find((r) => r.escrow.hash === prepared.escrow.hash)?.instruction ?? {}
        const words = await summary({ body: instruction, hash: prepared.escrow.hash }, names)
        process.stderr.write(`• ${words}\n  task ${prepared.task.id}, escrow ${prepared.escrow.hash}\n`)
        if (!options.yes && !(await askConfirm('Sign and pay?'))) break
        const released = await prepared.send()
        paid.push({
          task_id: prepared.task.id,
          amount: money(prepared.escrow.amount_fils, prepared.escrow.currency),
          transfer_id: released.transfer.id,
          escrow_id: released.escrow.id,
        })
        if (!options.all) break
      }
      cli.out({ engagement_id: engagementId, released: paid }, () =>
        paid.length
          ? [
              ...paid.map(
                (p) =>
                  `Paid ${p.amount} to ${names.agent_name ?? 'the agent'} for task ${p.task_id} (transfer ${p.transfer_id}).`,
              ),
            ]
          : `Nothing waits to be paid on ${names.agent_name ?? 'this engagement'}${names.job_title ? ` for “${names.job_title}”` : ''}.`,
      )
    })

  program
    .command('statement')
    .description('the wallet’s movements over a period (default: this month)')
    .option('--from <date>', 'from (ISO 8601 date, inclusive)')
    .option('--to <date>', 'to (ISO 8601 date, exclusive)')
    .option('--csv', 'the statement as CSV')
    .action(async (options: { from?: string; to?: string; csv?: boolean }) => {
      const client = (await cli.profile()).client
      const period = {
        ...(options.from ? { from: options.from } : {}),
        ...(options.to ? { to: options.to } : {}),
      }
      if (options.csv) {
        const csv = await ok(
          client.api.GET('/api/statements', {
            params: { query: { ...period, format: 'csv', lang: 'en' } },
            parseAs: 'text',
          }),
        )
        if (cli.json) cli.out({ csv }, () => '')
        else process.stdout.write(csv.endsWith('\n') ? csv : `${csv}\n`)
        return
      }
      const statement = (await ok(
        client.api.GET('/api/statements', { params: { query: { ...period, lang: 'en' } } }),
      )) as Statement
      cli.out(statement, () => [
        `Statement ${when(statement.from)} – ${when(statement.to)}`,
        `Opening: wallet ${money(statement.opening.wallet.amount_fils)}, held ${money(statement.opening.held.amount_fils)}`,
        ...(statement.movements.length
          ? columns([
              ['when', 'what', 'wallet', 'held', 'task'],
              ...statement.movements.map((m) => [
                when(m.at),
                KIND_WORDS[m.kind] ?? m.kind,
                money(m.wallet.amount_fils, m.wallet.currency),
                money(m.held.amount_fils, m.held.currency),
                m.task_id ?? '',
              ]),
            ]).map((l) => `  ${l}`)
          : ['  no movements']),
        `Closing: wallet ${money(statement.closing.wallet.amount_fils)}, held ${money(statement.closing.held.amount_fils)}`,
      ])
    })
}
