import type { MoneyLocale } from '@svc/kit'
import type { CatalogueService } from '../catalogue/index.ts'

/** An engagement as the console names it: the job's title and the agent's display name (null when the catalogue has none). */
export interface EngagementNames {
  job_title: string | null
  agent_name: string | null
}

/**
 * The engagements' job titles and agent names in `lang` beside their ids (two queries for the
 * list); with `provider`, the agent's provider's name as well (the one engagement's page).
 */
export async function withNames<E extends { job_id: string; agent_did: string }>(
  catalogue: CatalogueService,
  engagements: E[],
  lang: MoneyLocale,
): Promise<Array<E & EngagementNames>> {
  const [titles, names] = await Promise.all([
    catalogue.titlesOf(
      engagements.map((e) => e.job_id),
      lang,
    ),
    catalogue.agentNamesOf(
      engagements.map((e) => e.agent_did),
      lang,
    ),
  ])
  return engagements.map((e) => ({
    ...e,
    job_title: titles.get(e.job_id) ?? null,
    agent_name: names.get(e.agent_did) ?? null,
  }))
}

/** The one engagement's names and its agent's provider (the organization that publishes it), for what is signed. */
export async function detailNames<D extends { engagement: { job_id: string; agent_did: string } }>(
  catalogue: CatalogueService,
  detail: D,
  lang: MoneyLocale,
) {
  const [named] = await withNames(catalogue, [detail.engagement], lang)
  const agent = await catalogue.agent(detail.engagement.agent_did, lang)
  return { ...detail, engagement: { ...named!, provider_name: agent?.provider.name ?? null } }
}
