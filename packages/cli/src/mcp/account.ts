/** `list_engagements` and `get_statement`: what the person has hired, and the money that moved. */
import { ok } from '@svc/client'
import { z } from 'zod'
import { answer, guarded, type Registrar } from './tool.ts'
import { aed } from './words.ts'

const Engagement = z.object({
  engagement_id: z.string(),
  state: z.string().describe('pending (not signed yet), active or ended'),
  job_id: z.string(),
  job_title: z.string().nullable(),
  agent_did: z.string(),
  agent_name: z.string().nullable(),
  price_fils: z.number().int().describe('price per task, AED fils'),
  created_at: z.string(),
})
const Movement = z.object({
  at: z.string(),
  kind: z.string().describe('funding, escrow_hold, release, fee, vat, refund or adjustment'),
  wallet_fils: z.number().int().describe('change of the wallet (negative: out)'),
  held_fils: z.number().int().describe('change of the money held in escrow'),
  transfer_id: z.string(),
  engagement_id: z.string().nullable(),
  task_id: z.string().nullable(),
})

const signed = (fils: number) => (fils > 0 ? `+${aed(fils)}` : aed(fils))

export const accountTools: Registrar = (server, { client }) => {
  server.registerTool(
    'list_engagements',
    {
      title: 'My hired agents',
      description:
        'Lists the engagements of the person’s organization (each a hired agent for a job): engagement_id, ' +
        'state, job, agent and price per task, newest first. Use an active engagement_id with run_task or ' +
        'release_payment. Reading only.',
      inputSchema: {},
      outputSchema: { engagements: z.array(Engagement) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(async () => {
      const found = await ok(
        client.api.GET('/api/engagements', { params: { query: { limit: 100, offset: 0 } } }),
      )
      const engagements = found.engagements.map((e) => ({
        engagement_id: e.id,
        state: e.state,
        job_id: e.job_id,
        job_title: e.job_title,
        agent_did: e.agent_did,
        agent_name: e.agent_name,
        price_fils: e.price_fils,
        created_at: e.created_at,
      }))
      const text = engagements.length
        ? `${engagements.length} engagement${engagements.length === 1 ? '' : 's'}:\n` +
          engagements
            .map(
              (e) =>
                `- ${e.engagement_id}: ${e.agent_name ?? e.agent_did} for “${e.job_title ?? e.job_id}”, ` +
                `${aed(e.price_fils)} a task, ${e.state} (since ${e.created_at.slice(0, 10)})`,
            )
            .join('\n')
        : 'No engagements yet: find an agent with search_market and hire it with hire_agent.'
      return answer(text, { engagements })
    }),
  )

  server.registerTool(
    'get_statement',
    {
      title: 'Wallet statement',
      description:
        'The wallet statement of the person’s organization for a period: opening and closing balances of the ' +
        'wallet and of the money held in escrow, and every movement (funding, escrow holds, releases to agents, ' +
        'fees, VAT, refunds). Dates are ISO 8601 (2026-01-31 or with a time and offset); from is inclusive, to ' +
        'exclusive; without them, the current month. Reading only.',
      inputSchema: {
        from: z.string().max(40).optional().describe('start, ISO 8601 date or date-time (inclusive)'),
        to: z.string().max(40).optional().describe('end, ISO 8601 date or date-time (exclusive)'),
      },
      outputSchema: {
        from: z.string(),
        to: z.string(),
        opening_wallet_fils: z.number().int(),
        closing_wallet_fils: z.number().int(),
        opening_held_fils: z.number().int(),
        closing_held_fils: z.number().int(),
        movements: z.array(Movement),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(async ({ from, to }) => {
      const s = await ok(
        client.api.GET('/api/statements', {
          params: { query: { format: 'json', ...(from ? { from } : {}), ...(to ? { to } : {}) } },
        }),
      )
      if (typeof s === 'string') throw new Error('the statement came as CSV, not JSON')
      const movements = s.movements.map((m) => ({
        at: m.at,
        kind: m.kind,
        wallet_fils: m.wallet.amount_fils,
        held_fils: m.held.amount_fils,
        transfer_id: m.transfer_id,
        engagement_id: m.engagement_id,
        task_id: m.task_id,
      }))
      const SHOWN = 50
      const lines = movements.slice(-SHOWN).map((m) => {
        const parts = [
          m.wallet_fils ? `wallet ${signed(m.wallet_fils)}` : '',
          m.held_fils ? `held ${signed(m.held_fils)}` : '',
        ].filter(Boolean)
        return `- ${m.at.slice(0, 19).replace('T', ' ')} ${m.kind}: ${parts.join(', ') || 'no change'}${
          m.task_id ? ` (task ${m.task_id})` : m.engagement_id ? ` (engagement ${m.engagement_id})` : ''
        }`
      })
      const text = [
        `Statement from ${s.from} to ${s.to}: wallet ${aed(s.opening.wallet.amount_fils)} → ${aed(
          s.closing.wallet.amount_fils,
        )}; held in escrow ${aed(s.opening.held.amount_fils)} → ${aed(s.closing.held.amount_fils)}.`,
        movements.length
          ? `${movements.length} movement${movements.length === 1 ? '' : 's'}${
              movements.length > SHOWN ? ` (the last ${SHOWN} shown)` : ''
            }:\n${lines.join('\n')}`
          : 'No movements in this period.',
      ].join('\n')
      return answer(text, {
        from: s.from,
        to: s.to,
        opening_wallet_fils: s.opening.wallet.amount_fils,
        closing_wallet_fils: s.closing.wallet.amount_fils,
        opening_held_fils: s.opening.held.amount_fils,
        closing_held_fils: s.closing.held.amount_fils,
        movements,
      })
    }),
  )
}
