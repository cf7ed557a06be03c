/** `svc market [WORDS]`: the catalogue's jobs and the market's listings, prices as money. */
import { ok } from '@svc/client'
import type { Command } from 'commander'
import type { Cli } from '../cli.ts'
import { money } from '../format.ts'

export function marketCommand(program: Command, cli: Cli) {
  program
    .command('market')
    .description('jobs you can hire an agent for, and the market’s listings (WORDS narrow them)')
    .argument('[words...]', 'words to look for')
    .option('--limit <n>', 'how many listings at most', '20')
    .action(async (words: string[], options: { limit: string }) => {
      const client = (await cli.profile()).client
      const query = words.join(' ').trim()
      const limit = Math.min(Math.max(Number.parseInt(options.limit, 10) || 20, 1), 100)
      const [jobs, found] = await Promise.all([
        client.jobs(),
        ok(
          client.api.GET('/api/market/listings', {
            params: { query: { limit, offset: 0, lang: 'en', ...(query ? { q: query } : {}) } },
          }),
        ),
      ])
      const needles = query.toLowerCase().split(/\s+/).filter(Boolean)
      const text = (j: (typeof jobs)[number]) =>
        [j.title, j.outcome, j.description, j.profile, ...j.agents.map((a) => a.name)].join(' ').toLowerCase()
      const matching = jobs.filter((j) => needles.every((n) => text(j).includes(n)))
      const listings = found.listings
      cli.out(
        {
          jobs: matching.map((j) => ({
            id: j.id,
            title: j.title,
            outcome: j.outcome,
            price: {
              amount_fils: j.price_fils,
              currency: j.currency,
              display: money(j.price_fils, j.currency),
            },
            agents: j.agents.map((a) => ({ did: a.did, name: a.name, provider: a.provider.name })),
          })),
          listings: listings.map((l) => ({
            id: l.id,
            title: l.title,
            agent_did: l.agent_did,
            price: l.price,
            availability: l.availability.state,
          })),
        },
        () => {
          const lines: string[] = []
          if (matching.length) lines.push(`Jobs (${matching.length}):`)
          for (const j of matching) {
            lines.push(`  ${j.title} — ${money(j.price_fils, j.currency)} a task  [${j.id}]`)
            lines.push(`    ${j.outcome}`)
            for (const a of j.agents) lines.push(`    · ${a.name}, by ${a.provider.name}`)
          }
          if (listings.length) lines.push(`${lines.length ? '\n' : ''}Listings (${found.total}):`)
          for (const l of listings)
            lines.push(
              `  ${l.title} — ${money(l.price.amount_fils, l.price.currency)} (${l.availability.state})  [${l.id}]`,
            )
          if (!lines.length)
            lines.push(query ? `Nothing in the market matches “${query}”.` : 'The market is empty.')
          else lines.push('', 'Hire with `svc hire JOB` (the id in brackets).')
          return lines
        },
      )
    })
}
