/** `search_market` and `get_job`: the catalogue's jobs (what can be hired) and the market's listings. */
import { ok, type SvcClient, SvcError } from '@svc/client'
import { z } from 'zod'
import { answer, failure, guarded, type Registrar, shortDid } from './tool.ts'
import { aed, errorWords } from './words.ts'

const Agent = z.object({
  did: z.string(),
  name: z.string(),
  provider: z.string(),
  description: z.string().optional(),
})
const Job = z.object({
  job_id: z.string(),
  title: z.string(),
  outcome: z.string(),
  price_fils: z.number().int().describe('price per task in AED fils (1 AED = 100 fils)'),
  price: z.string().describe('the price in words, e.g. AED 25.00'),
  agents: z.array(Agent),
})
const Listing = z.object({
  listing_id: z.string(),
  agent_did: z.string(),
  title: z.string(),
  price_fils: z.number().int(),
  price: z.string(),
  availability: z.string(),
  job_ids: z.array(z.string()).describe('the jobs this agent serves: hire it with one of them'),
})

type CatalogueJob = Awaited<ReturnType<SvcClient['jobs']>>[number]

const jobView = (j: CatalogueJob, withDescription = false): z.infer<typeof Job> => ({
  job_id: j.id,
  title: j.title,
  outcome: j.outcome,
  price_fils: j.price_fils,
  price: aed(j.price_fils),
  agents: j.agents.map((a) => ({
    did: a.did,
    name: a.name,
    provider: a.provider.name,
    ...(withDescription ? { description: a.description } : {}),
  })),
})

const jobLine = (j: z.infer<typeof Job>) =>
  `- ${j.title} (job_id ${j.job_id}): ${j.price} a task. ${j.outcome}\n  Agents: ${
    j.agents.map((a) => `${a.name} by ${a.provider} (${shortDid(a.did)})`).join('; ') || 'none yet'
  }`

/** How well a job matches the words: how many of them appear in its text (0: not at all). */
function score(job: CatalogueJob, words: string[]) {
  const text = [
    job.title,
    job.description,
    job.outcome,
    job.profile,
    ...job.agents.flatMap((a) => [a.name, a.description]),
  ]
    .join(' ')
    .toLowerCase()
  return words.filter((w) => text.includes(w)).length
}

export const marketTools: Registrar = (server, { client }) => {
  server.registerTool(
    'search_market',
    {
      title: 'Search the agent market',
      description:
        'Finds AI agents to hire for a job. Give a few words of what you need done (for example "invoice check" ' +
        'or "summarise a contract"); answers the matching jobs (each with its price per task and the agents ' +
        'that do it) and the market listings. Use a job_id (and optionally an agent DID) from here with ' +
        'hire_agent. Reading only: nothing is spent.',
      inputSchema: {
        query: z.string().max(200).describe('words describing the work; empty lists every job'),
      },
      outputSchema: { query: z.string(), jobs: z.array(Job), listings: z.array(Listing) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(async ({ query }) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean)
      const all = await client.jobs()
      const jobs = all
        .map((j) => ({ j, s: words.length ? score(j, words) : 1 }))
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s)
        .map((x) => jobView(x.j))
      const found = await ok(
        client.api.GET('/api/market/listings', {
          params: { query: { limit: 20, offset: 0, ...(query.trim() ? { q: query.trim() } : {}) } },
        }),
      )
      const listings = found.listings.map((l) => ({
        listing_id: l.id,
        agent_did: l.agent_did,
        title: l.title,
        price_fils: l.price.amount_fils,
        price: aed(l.price.amount_fils),
        availability: l.availability.state,
        job_ids: all.filter((j) => j.agents.some((a) => a.did === l.agent_did)).map((j) => j.id),
      }))
      const text = [
        jobs.length
          ? `${jobs.length} job${jobs.length === 1 ? '' : 's'} match “${query}”:\n${jobs.map(jobLine).join('\n')}`
          : `No job matches “${query}”.`,
        listings.length
          ? `Market listings:\n${listings
              .map(
                (l) =>
                  `- ${l.title}: ${l.price} a task, ${l.availability} (agent ${shortDid(l.agent_did)}` +
                  `${l.job_ids.length ? `; hire with job_id ${l.job_ids.join(' or ')}` : ''})`,
              )
              .join('\n')}`
          : '',
        jobs.length ? 'To hire, call hire_agent with a job_id (and an agent DID from its agents).' : '',
      ]
        .filter(Boolean)
        .join('\n\n')
      return answer(text, { query, jobs, listings })
    }),
  )

  server.registerTool(
    'get_job',
    {
      title: 'A job in detail',
      description:
        'One job of the catalogue by its job_id: what it does, the outcome promised, its price per task and ' +
        'every agent that does it (name, provider, DID). Reading only.',
      inputSchema: { job_id: z.string().min(1).max(100).describe('a job_id from search_market') },
      outputSchema: { ...Job.shape, description: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(async ({ job_id }) => {
      const job = (await client.jobs()).find((j) => j.id === job_id)
      if (!job) return failure(errorWords(new SvcError('job_not_found', 404, `no job ${job_id}`)))
      const view = { ...jobView(job, true), description: job.description }
      const text = [
        `${job.title} (job_id ${job.id}): ${view.price} a task, paid per task from escrow.`,
        job.description,
        `Outcome: ${job.outcome}`,
        `Agents:\n${view.agents.map((a) => `- ${a.name} by ${a.provider} (${a.did}): ${a.description}`).join('\n') || 'none yet'}`,
      ].join('\n')
      return answer(text, view)
    }),
  )
}
