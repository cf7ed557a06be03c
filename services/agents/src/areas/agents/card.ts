import type { AgentDefinition } from './catalogue.ts'

/** The card extension that announces signed results and the agent's did:key (optional for clients). */
export const AGENT_RESULT_EXTENSION = 'urn:svc:a2a:agent-result:v1'

/** Where an agent lives under the service's base URL. */
export const agentUrl = (baseUrl: string, id: string) => `${baseUrl.replace(/\/+$/, '')}/agents/${id}`
export const cardUrl = (baseUrl: string, id: string) => `${agentUrl(baseUrl, id)}/.well-known/agent-card.json`

/** The card's name for the idp's OAuth 2.0 scheme. */
export const IDP_SCHEME = 'idpClientCredentials'

/**
 * The A2A 1.0 agent card (JSON form, camelCase): one JSON-RPC interface for protocol 1.0 and the
 * same URL again for 0.3 (which the endpoint also answers), streaming on, no push notifications,
 * an OAuth 2.0 client credentials token from the idp required (its audience this service: RFC 8707
 * `resource` = the service's base URL), and the extension naming the did:key that signs the
 * agent's results.
 */
export function agentCard(
  agent: AgentDefinition,
  baseUrl: string,
  version: string,
  did: string,
  issuer: string,
) {
  const url = agentUrl(baseUrl, agent.id)
  const resource = baseUrl.replace(/\/+$/, '')
  return {
    name: agent.name,
    description: agent.description,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    provider: { organization: 'svc built-in agents', url: baseUrl },
    version,
    documentationUrl: `${baseUrl.replace(/\/+$/, '')}/agents`,
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: [
        {
          uri: AGENT_RESULT_EXTENSION,
          description:
            'Each completed task carries in its artifact metadata svc_result (svc.agent-result v1) and svc_signature (base64url Ed25519 over its JCS form) by the did:key in params.did.',
          required: false,
          params: {
            did,
            type: 'svc.agent-result',
            version: 1,
            result_key: 'svc_result',
            signature_key: 'svc_signature',
          },
        },
      ],
    },
    securitySchemes: {
      [IDP_SCHEME]: {
        oauth2SecurityScheme: {
          description: `An access token from the idp's client credentials grant with resource=${resource} (RFC 8707), sent as a Bearer token; each caller sees only its own tasks`,
          flows: { clientCredentials: { tokenUrl: `${issuer}/token`, refreshUrl: '', scopes: {} } },
          oauth2MetadataUrl: `${issuer}/.well-known/oauth-authorization-server`,
        },
      },
    },
    securityRequirements: [{ schemes: { [IDP_SCHEME]: { list: [] } } }],
    defaultInputModes: agent.inputModes ?? ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        ...agent.skill,
        inputModes: agent.inputModes ?? ['text/plain'],
        outputModes: ['text/plain', 'application/json'],
      },
    ],
  }
}
