import type { RentalDb } from '../../db.ts'
import { catalogue } from '../catalogue/store.ts'

/** Where the rental's A2A JSON-RPC endpoint lives (named in the card, so clients need not know it). */
export const A2A_PATH = '/a2a'
/** The media types a message's parts may have (the card's defaultInputModes); others are ContentTypeNotSupported. */
export const INPUT_MODES = ['text/plain']

/** The card's name for the Bearer scheme. */
export const BEARER_SCHEME = 'agtBearer'

/**
 * The rental as an A2A 1.0 agent (JSON form, camelCase): one JSON-RPC interface for 1.0 and the
 * same URL for 0.3, streaming on, no push notifications, the `agt_` Bearer token required, and a
 * skill per job of the catalogue (a task is run by the agent hired on one of the caller's engagements).
 */
export async function rentalCard(db: RentalDb, baseUrl: string, version: string) {
  const base = baseUrl.replace(/\/+$/, '')
  const url = `${base}${A2A_PATH}`
  const jobs = await catalogue(db)
  const modes = { inputModes: INPUT_MODES, outputModes: ['text/plain', 'application/json'] }
  return {
    name: 'svc agent rental',
    description:
      'The agent rental service as an A2A agent: your own software runs tasks on your active engagements with an agt_ API token. Name the engagement in message.metadata.engagement_id (or as the contextId); the task is paid from the engagement’s escrow and receipted on the ledger.',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    provider: { organization: 'svc agent rental', url: base },
    version,
    documentationUrl: `${base}/docs`,
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {
      [BEARER_SCHEME]: {
        httpAuthSecurityScheme: {
          description:
            'An API token from POST /api/tokens (agt_…); its policy limits the scopes (tasks:read, tasks:write) and the engagements it may act on',
          scheme: 'Bearer',
          bearerFormat: 'agt_',
        },
      },
    },
    securityRequirements: [{ schemes: { [BEARER_SCHEME]: { list: [] } } }],
    defaultInputModes: modes.inputModes,
    defaultOutputModes: modes.outputModes,
    skills:
      jobs.length > 0
        ? jobs.map((job) => ({
            id: job.id,
            name: job.title,
            description: `${job.description} (${job.outcome}; ${Number(job.price_fils)} fils ${job.currency} a task, on an engagement for this job)`,
            tags: ['job', job.profile],
            examples: [],
            ...modes,
          }))
        : [
            {
              id: 'engagement-task',
              name: 'Run a task on one of your engagements',
              description: 'Sends the message’s text to the agent hired on the engagement you name',
              tags: ['engagement'],
              examples: [],
              ...modes,
            },
          ],
  }
}
