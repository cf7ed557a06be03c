import { randomUUID } from 'node:crypto'
import { Artifact, Role, type SendMessageRequest } from '@a2a-js/sdk'
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { type AgentCredentials, authenticatingFetch } from './agent-credentials.ts'

/** One A2A call's outcome: the task's first artifact in its wire (ProtoJSON) form. */
export interface AgentAnswer {
  agentTaskId: string
  artifact: { parts?: Array<{ text?: string; data?: unknown }>; metadata?: Record<string, unknown> }
}

const request = (text: string): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
})

/**
 * Sends tasks to agents over A2A 1.0 with the @a2a-js/sdk client, resolved from the agent's card
 * URL (the card names the JSON-RPC endpoint). Clients are kept per card URL. With credentials, the
 * agents service's calls carry the rental's access token (see agent-credentials.ts).
 */
export class AgentDispatcher {
  readonly #clients = new Map<string, Promise<Client>>()
  readonly #factory: ClientFactory

  constructor(credentials?: AgentCredentials) {
    this.#factory = credentials
      ? new ClientFactory(
          ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
            transports: [new JsonRpcTransportFactory({ fetchImpl: authenticatingFetch(credentials) })],
          }),
        )
      : new ClientFactory()
  }

  #client(cardUrl: string): Promise<Client> {
    let client = this.#clients.get(cardUrl)
    if (!client) {
      client = this.#factory.createFromUrl(cardUrl, '')
      client.catch(() => this.#clients.delete(cardUrl))
      this.#clients.set(cardUrl, client)
    }
    return client
  }

  async send(cardUrl: string, text: string, signal: AbortSignal): Promise<AgentAnswer> {
    const client = await this.#client(cardUrl)
    const result = await client.sendMessage(request(text), { signal })
    if (!('artifacts' in result)) throw new Error('the agent answered a message, not a task')
    const artifact = result.artifacts[0]
    if (!artifact) throw new Error(`the agent's task ${result.id} has no artifact`)
    return { agentTaskId: result.id, artifact: Artifact.toJSON(artifact) as AgentAnswer['artifact'] }
  }
}
