import type { FullStack } from './full-stack.ts'

/**
 * One object of each kind alice owns, by the collection its id appears under in the paths:
 * a token (not the sweep's credential), the agent she hires, an active engagement and a task.
 */
export async function aliceObjects(stack: FullStack): Promise<Record<string, string>> {
  const ids: Record<string, string> = {}
  const probed = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'probed' })
  ids.tokens = (probed.body as { id: string }).id
  ids.agents = await stack.agentOf('job_summary')
  ids.engagements = await stack.hireAndSign(stack.alice, 'job_summary', ids.agents, stack.newClientKey())
  const task = await stack.call(stack.alice, 'POST', '/api/tasks', {
    engagement_id: ids.engagements,
    text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
  })
  ids.tasks = (task.body.task as { id: string } | undefined)?.id ?? ''
  for (const [name, id] of Object.entries(ids)) if (!id) throw new Error(`no ${name} object: ${task.text}`)
  return ids
}
