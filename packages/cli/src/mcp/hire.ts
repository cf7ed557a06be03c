/**
 * `hire_agent`: asks the person (the spending rule) before anything is made, then hires and signs
 * the SLA and the package's escrow with the person's key, never more than the amount they allowed.
 */
import { ok, signBody, SvcError } from '@svc/client'
import { z } from 'zod'
import { answer, failure, guarded, idempotent, type Registrar, refusedBeforeSpending } from './tool.ts'
import { aed, errorWords } from './words.ts'

export const hireTool: Registrar = (server, { client, key, gate }) => {
  server.registerTool(
    'hire_agent',
    {
      title: 'Hire an agent (spends money)',
      description:
        'Hires an agent for a job: makes an engagement, signs its agreement (SLA) with the person’s key and ' +
        'holds the first task’s price in escrow from the wallet. COMMITS MONEY: the person is asked to approve ' +
        'the amount first (or the server’s --allow-spend allowance is used); if they decline, nothing is spent. ' +
        'Give a job_id from search_market; agent_did picks one of the job’s agents (else the first). Answers ' +
        'the engagement_id to pass to run_task.',
      inputSchema: {
        job_id: z.string().min(1).max(100).describe('the job to hire for (from search_market or get_job)'),
        agent_did: z
          .string()
          .max(200)
          .optional()
          .describe('one of the job’s agents (default: its first agent)'),
      },
      outputSchema: {
        outcome: z.enum(['hired', 'declined', 'cancelled']),
        job_id: z.string(),
        agent_did: z.string(),
        agent_name: z.string(),
        price_fils: z.number().int().describe('price per task, AED fils'),
        engagement_id: z.string().optional(),
        state: z.string().optional().describe('the engagement’s state (active once signed)'),
        held_fils: z.number().int().optional().describe('held in escrow for the first task'),
        sla_hash: z.string().optional(),
        approved_by: z.enum(['person', 'allowance']).optional(),
      },
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    guarded(async ({ job_id, agent_did }) => {
      const job = (await client.jobs()).find((j) => j.id === job_id)
      if (!job) return failure(errorWords(new SvcError('job_not_found', 404, `no job ${job_id}`)))
      const agent = agent_did ? job.agents.find((a) => a.did === agent_did) : job.agents[0]
      if (!agent)
        return failure(
          errorWords(new SvcError('agent_not_serving', 409, `${agent_did ?? 'no agent'} for ${job_id}`)),
        )
      const signer = await key()
      const who = `${agent.name} (by ${agent.provider.name})`
      const base = { job_id, agent_did: agent.did, agent_name: agent.name, price_fils: job.price_fils }
      const decision =
        job.price_fils > 0
          ? await gate.approve({
              amountFils: job.price_fils,
              counterparty: who,
              purpose:
                `Hire ${agent.name} for “${job.title}”. ${aed(job.price_fils)} of your wallet is held in escrow ` +
                'now for the first task; the agent is paid when you release it after the task.',
            })
          : ({ ok: true, by: 'person', release: () => {}, covers: () => {} } as const)
      if (!decision.ok) {
        if (decision.outcome === 'refused') return failure(decision.sentence)
        return answer(decision.sentence, { outcome: decision.outcome, ...base })
      }
      let signed = false
      try {
        const hired = await ok(
          client.api.POST('/api/engagements', {
            body: { job_id, agent_did: agent.did, client_did: signer.did },
            headers: idempotent(),
          }),
        )
        const id = hired.engagement.id
        const asked = hired.package.escrows.reduce((sum, e) => sum + Number(e.body.amount_fils ?? 0), 0)
        if (asked > job.price_fils) {
          decision.release()
          return failure(
            `The rental asked to hold ${aed(asked)}, more than the ${aed(job.price_fils)} allowed: nothing was ` +
              `signed and nothing spent (engagement ${id} stays unsigned).`,
          )
        }
        const escrows = await Promise.all(
          hired.package.escrows.map(async (e) => ({
            escrow_hash: e.hash,
            signature: await signBody(signer, e),
          })),
        )
        signed = true
        const done = await ok(
          client.api.POST('/api/engagements/{id}/signatures', {
            params: { path: { id } },
            body: { sla_signature: await signBody(signer, hired.package.sla), escrow_signatures: escrows },
            headers: idempotent(),
          }),
        )
        decision.covers(hired.package.escrows.map((e) => e.hash))
        const text =
          `Hired ${who} for “${job.title}”: engagement ${id} is ${done.engagement.state}. ` +
          (asked > 0
            ? `${aed(asked)} is held in escrow for its first task (approved by ${
                decision.by === 'person' ? 'the person' : 'the session’s allowance'
              }); release_payment pays the agent after the task. `
            : 'Nothing is held: its tasks are free. ') +
          `SLA ${hired.package.sla.hash}. ` +
          `Run a task with run_task and engagement_id ${id}.`
        return answer(text, {
          outcome: 'hired',
          ...base,
          engagement_id: id,
          state: done.engagement.state,
          held_fils: asked,
          sla_hash: hired.package.sla.hash,
          approved_by: decision.by,
        })
      } catch (err) {
        if (!signed || refusedBeforeSpending(err)) decision.release()
        throw err
      }
    }),
  )
}
