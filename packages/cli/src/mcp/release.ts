/**
 * `release_payment`: pays the agent for the engagement's completed tasks, from their escrows, after
 * the person said yes to the total (the spending rule). Each release is signed as handed over and
 * sent under its own idempotency key: it pays once.
 */
import { ok, signUnnamed } from '@svc/client'
import { z } from 'zod'
import { answer, failure, guarded, idempotent, type Registrar, refusedBeforeSpending } from './tool.ts'
import { aed, errorWords } from './words.ts'

const Payment = z.object({
  task_id: z.string().nullable(),
  escrow_hash: z.string(),
  amount_fils: z.number().int(),
  transfer_id: z.string(),
})

export const releaseTool: Registrar = (server, { client, key, gate }) => {
  server.registerTool(
    'release_payment',
    {
      title: 'Pay the agent (spends money)',
      description:
        'Pays an engagement’s agent for its completed tasks: each task’s escrow is released to the agent. ' +
        'COMMITS MONEY: the person is asked to approve the total first (or the server’s --allow-spend ' +
        'allowance is used); if they decline, nothing is paid. Use it once the task outputs are satisfactory.',
      inputSchema: {
        engagement_id: z.string().min(1).max(100).describe('from hire_agent or list_engagements'),
      },
      outputSchema: {
        outcome: z.enum(['released', 'nothing_to_release', 'declined', 'cancelled']),
        engagement_id: z.string(),
        amount_fils: z.number().int().describe('paid (or, when declined, what was asked), AED fils'),
        payments: z.array(Payment),
        approved_by: z.enum(['person', 'allowance']).optional(),
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    guarded(async ({ engagement_id }) => {
      const { engagement } = await ok(
        client.api.GET('/api/engagements/{id}', { params: { path: { id: engagement_id } } }),
      )
      const { releases } = await client.pending(engagement_id)
      if (releases.length === 0)
        return answer(
          `Nothing waits to be paid on engagement ${engagement_id}: every completed task is already paid.`,
          { outcome: 'nothing_to_release', engagement_id, amount_fils: 0, payments: [] },
        )
      const signer = await key()
      const total = releases.reduce((sum, r) => sum + r.escrow.amount_fils, 0)
      const agent = engagement.agent_name ?? engagement.agent_did
      const who = engagement.provider_name ? `${agent} (by ${engagement.provider_name})` : agent
      const tasks = releases.map((r) => r.task.id).join(', ')
      const decision = await gate.approve({
        amountFils: total,
        counterparty: who,
        purpose:
          `Release payment to ${agent} for ${releases.length} completed task${releases.length === 1 ? '' : 's'} ` +
          `of “${engagement.job_title ?? engagement.job_id}” (${tasks}). The money held in escrow goes to the agent.`,
        escrows: releases.map((r) => ({ hash: r.escrow.hash, amountFils: r.escrow.amount_fils })),
      })
      if (!decision.ok) {
        if (decision.outcome === 'refused') return failure(decision.sentence)
        return answer(decision.sentence, {
          outcome: decision.outcome,
          engagement_id,
          amount_fils: total,
          payments: [],
        })
      }
      const payments: Array<z.infer<typeof Payment>> = []
      for (const release of releases) {
        try {
          const paid = await ok(
            client.api.POST('/api/engagements/{id}/releases', {
              params: { path: { id: engagement_id } },
              body: {
                escrow_hash: release.escrow.hash,
                instruction: {
                  body: release.instruction,
                  signature: await signUnnamed(signer, release.instruction),
                },
              },
              headers: idempotent(),
            }),
          )
          payments.push({
            task_id: release.task.id,
            escrow_hash: release.escrow.hash,
            amount_fils: release.escrow.amount_fils,
            transfer_id: paid.transfer.id,
          })
        } catch (err) {
          if (payments.length === 0 && refusedBeforeSpending(err)) decision.release()
          if (payments.length === 0) throw err
          const paidFils = payments.reduce((s, p) => s + p.amount_fils, 0)
          return failure(
            `Paid ${aed(paidFils)} to ${who} for ${payments.map((p) => p.task_id).join(', ')}, then the next ` +
              `release failed: ${errorWords(err)}`,
          )
        }
      }
      const text =
        `Paid ${aed(total)} to ${who} on engagement ${engagement_id} (approved by ${
          decision.by === 'person' ? 'the person' : 'the session’s allowance'
        }):\n` +
        payments
          .map((p) => `- task ${p.task_id}: ${aed(p.amount_fils)}, transfer ${p.transfer_id}`)
          .join('\n')
      return answer(text, {
        outcome: 'released',
        engagement_id,
        amount_fils: total,
        payments,
        approved_by: decision.by,
      })
    }),
  )
}
