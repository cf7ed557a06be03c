/**
 * `svc hire JOB [--agent DID] [--yes]`: the rental hands over the agreement (the SLA and the first
 * task's escrow), shown in the console's words with each hash; once the person says yes (or with
 * --yes) both are signed with the local key and the engagement is active.
 */
import { ok, SvcError } from '@svc/client'
import type { Command } from 'commander'
import { summary } from '../agreement.ts'
import { type Cli, usage } from '../cli.ts'
import { money, short } from '../format.ts'
import { askConfirm } from '../ui.ts'

export function hireCommand(program: Command, cli: Cli) {
  program
    .command('hire')
    .description('hire an agent for a job: shows the agreement, asks, signs it with your key')
    .argument('<job>', 'the job’s id (see `svc market`)')
    .option('--agent <did>', 'which of the job’s agents (default: the first)')
    .option('--yes', 'sign without asking')
    .action(async (jobId: string, options: { agent?: string; yes?: boolean }) => {
      const profile = await cli.profile()
      const jobs = await profile.client.jobs()
      const job =
        jobs.find((j) => j.id === jobId) ?? jobs.find((j) => j.title.toLowerCase() === jobId.toLowerCase())
      if (!job) throw usage(`There is no job “${jobId}” in the market (see \`svc market\`).`)
      const agent = options.agent ? job.agents.find((a) => a.did === options.agent) : job.agents[0]
      if (!agent)
        throw usage(
          options.agent
            ? `${options.agent} does not serve “${job.title}” (its agents: ${job.agents.map((a) => a.name).join(', ') || 'none'}).`
            : `No agent serves “${job.title}” at the moment.`,
        )
      if (!options.yes && !profile.interactive)
        throw usage('Hiring signs an agreement: add --yes to sign it without being asked.')
      const signer = await profile.signer()
      const key = await profile.key()
      cli.progress(
        `Asking to hire ${agent.name} for “${job.title}” (${money(job.price_fils, job.currency)} a task)…`,
      )
      const hired = await ok(
        signer.api.POST('/api/engagements', {
          params: { query: { lang: 'en' } },
          body: { job_id: job.id, agent_did: agent.did, client_did: key.did },
        }),
      )
      const names = {
        job_title: hired.engagement.job_title ?? job.title,
        agent_name: hired.engagement.agent_name ?? agent.name,
        provider_name: hired.engagement.provider_name ?? agent.provider.name,
      }
      const pkg = hired.package as unknown as {
        sla: { body: Record<string, unknown>; hash: string }
        escrows: Array<{ body: Record<string, unknown>; hash: string }>
      }
      const agreement = [
        { what: 'agreement (SLA)', hash: pkg.sla.hash, words: await summary(pkg.sla, names) },
        ...(await Promise.all(
          pkg.escrows.map(async (e) => ({ what: 'escrow', hash: e.hash, words: await summary(e, names) })),
        )),
      ]
      const shown = agreement.flatMap((a) => [`• ${a.words}`, `  ${a.what} ${a.hash}`])
      process.stderr.write(`\nYou are about to sign, with ${short(key.did)}:\n${shown.join('\n')}\n\n`)
      if (!options.yes && !(await askConfirm('Sign and hire?')))
        throw new SvcError(
          'cancelled',
          0,
          `not signed: engagement ${hired.engagement.id} stays pending, and nothing is paid`,
        )
      const signed = await signer.signPackage(hired.engagement.id, pkg)
      const engagement = signed.engagement
      cli.out(
        {
          engagement: {
            id: engagement.id,
            state: engagement.state,
            job_id: engagement.job_id,
            job_title: names.job_title,
            agent_did: engagement.agent_did,
            agent_name: names.agent_name,
            client_did: engagement.client_did,
            price: { amount_fils: engagement.price_fils, currency: engagement.currency },
          },
          agreement,
        },
        () => [
          `Hired ${names.agent_name} for “${names.job_title}”: the engagement is ${engagement.state}, ${money(engagement.price_fils, engagement.currency)} a task.`,
          `  engagement ${engagement.id}`,
          `Run a task: svc task run ${engagement.id} "…"`,
        ],
      )
    })
}
