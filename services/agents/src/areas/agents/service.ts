import { AgentCard } from '@a2a-js/sdk'
import { DefaultRequestHandler } from '@a2a-js/sdk/server'
import type { AgentsConfig } from '../../config.ts'
import { type AgentKey, deriveAgentKey } from '../../keys.ts'
import { etagOf } from '@svc/kit/http/etag'
import { agentCard, cardUrl } from './card.ts'
import { AGENTS, type AgentDefinition } from './catalogue.ts'
import { agentExecutor } from './executor.ts'
import { type JsonRpcEndpoint, jsonRpcEndpoint } from '@svc/kit/http/a2a-jsonrpc'
import { BoundedTaskStore } from './task-store.ts'

/** One running agent: its key, its card (as served, with its ETag), its tasks and its endpoint. */
export interface RunningAgent {
  definition: AgentDefinition
  key: AgentKey
  card: ReturnType<typeof agentCard>
  cardBody: string
  etag: string
  cardUrl: string
  store: BoundedTaskStore
  endpoint: JsonRpcEndpoint
}

export function startAgents(
  baseUrl: string,
  issuer: string,
  config: AgentsConfig,
  version: string,
  now: () => Date = () => new Date(),
): Map<string, RunningAgent> {
  const agents = new Map<string, RunningAgent>()
  const keys = new Map(AGENTS.map((d) => [d.id, deriveAgentKey(config.keySeed, d.id)]))
  const env = {
    didOf: (id: string) => keys.get(id)?.did,
    toolWaitMs: config.toolWaitMs,
    origins: config.files.origins,
  }
  for (const definition of AGENTS) {
    const key = keys.get(definition.id)!
    const card = agentCard(definition, baseUrl, version, key.did, issuer)
    const cardBody = JSON.stringify(card)
    const store = new BoundedTaskStore(config.maxTasks)
    const handler = new DefaultRequestHandler(
      AgentCard.fromJSON(card),
      store,
      agentExecutor(definition, key, now, config.files, env, config.delayMs),
    )
    agents.set(definition.id, {
      definition,
      key,
      card,
      cardBody,
      etag: etagOf(cardBody),
      cardUrl: cardUrl(baseUrl, definition.id),
      store,
      endpoint: jsonRpcEndpoint(handler, card.defaultInputModes),
    })
  }
  return agents
}

/** The directory entry of an agent at `GET /agents`. */
export const directoryEntry = (agent: RunningAgent) => ({
  id: agent.definition.id,
  name: agent.definition.name,
  description: agent.definition.description,
  did: agent.key.did,
  card_url: agent.cardUrl,
  skills: [agent.definition.skill.id],
})
