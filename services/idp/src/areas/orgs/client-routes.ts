import type { App, Sealer } from '@svc/kit'
import { Type } from 'typebox'
import { Client, CreatedClient, NewClient } from '../clients/index.ts'
import {
  createOrgClient,
  deleteOrgClient,
  orgClient,
  orgClients,
  type OrgClientDeps,
  rotateOrgClientSecret,
  declareModel,
  rotateOrgWebhookSecret,
  setLifecycleUrl,
} from './clients.ts'
import { orgKey, orgOf } from './auth.ts'
import { NoContent } from '../../responses.ts'
import { bindWorkload } from './workload.ts'

const { first_party: _firstParty, subject_type: _subjectType, ...orgFields } = NewClient.properties
/** The admin API's client body without `subject_type` and `first_party`: an organization's clients are pairwise and third-party. */
const NewOrgClient = Type.Object(orgFields, { additionalProperties: false })
const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

/** An organization's clients (identity-provider.md, Organizations): its own only; any other is 404. */
export function orgClientRoutes(
  app: App,
  deps: OrgClientDeps & { sealer: Sealer; issuer: string; allowPrivate: boolean },
) {
  const { db, sealer } = deps
  const tags = ['organizations']
  const security = [{ organizationKey: [] }]
  const authed = orgKey(db)

  app.post(
    '/orgs/clients',
    {
      ...authed,
      schema: {
        summary: 'Register a client of the organization; its secrets are shown once',
        tags,
        security,
        body: NewOrgClient,
        response: { 201: CreatedClient },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await createOrgClient(deps, sealer, orgOf(request), request.body, deps.allowPrivate)),
  )
  app.get(
    '/orgs/clients',
    {
      ...authed,
      schema: {
        summary: 'The organization’s clients',
        tags,
        security,
        response: { 200: Type.Object({ clients: Type.Array(Client) }) },
      },
    },
    async (request) => ({ clients: await orgClients(deps, orgOf(request)) }),
  )
  app.get(
    '/orgs/clients/:id',
    {
      ...authed,
      schema: {
        summary: 'One of the organization’s clients',
        tags,
        security,
        params: Id,
        response: { 200: Client },
      },
    },
    async (request) => orgClient(deps, orgOf(request), request.params.id),
  )
  app.delete(
    '/orgs/clients/:id',
    {
      ...authed,
      schema: {
        summary: 'Delete a client: it is unknown from now on',
        tags,
        security,
        params: Id,
        response: NoContent,
      },
    },
    async (request, reply) => {
      await deleteOrgClient(deps, orgOf(request), request.params.id)
      return reply.code(204).send(null)
    },
  )
  app.post(
    '/orgs/clients/:id/rotate-secret',
    {
      ...authed,
      schema: {
        summary:
          'A new client secret; the old one stops working at once on this instance, within 5 s on the others',
        tags,
        security,
        params: Id,
        response: {
          200: Type.Object({
            client_id: Type.String(),
            client_secret: Type.String(),
            client_secret_expires_at: Type.Integer(),
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(await rotateOrgClientSecret(deps, orgOf(request), request.params.id)),
  )
  app.post(
    '/orgs/clients/:id/rotate-webhook-secret',
    {
      ...authed,
      schema: {
        summary: 'A new webhook secret; the old one stops validating at once',
        tags,
        security,
        params: Id,
        response: { 200: Type.Object({ client_id: Type.String(), webhook_secret: Type.String() }) },
      },
    },
    async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(await rotateOrgWebhookSecret(deps, sealer, orgOf(request), request.params.id)),
  )
  app.post(
    '/orgs/clients/:id/lifecycle-url',
    {
      ...authed,
      schema: {
        summary:
          'Where the client hears of its users’ account events (also its back-channel logout URI if it has none)',
        tags,
        security,
        params: Id,
        body: Type.Object(
          { lifecycle_webhook_url: Type.String({ minLength: 1, maxLength: 2000 }) },
          { additionalProperties: false },
        ),
        response: { 200: Client },
      },
    },
    async (request) =>
      setLifecycleUrl(
        deps,
        orgOf(request),
        request.params.id,
        request.body.lifecycle_webhook_url,
        deps.allowPrivate,
      ),
  )
  app.put(
    '/orgs/clients/:id/agent-model',
    {
      ...authed,
      schema: {
        summary: 'Declare the model behind the agent (its tokens show it as agent, declared_by operator)',
        tags,
        security,
        params: Id,
        body: Type.Object(
          {
            model: Type.String({ minLength: 1, maxLength: 100 }),
            version: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
            provider: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Client },
      },
    },
    async (request) => declareModel(deps, orgOf(request), request.params.id, request.body),
  )
  app.post(
    '/orgs/clients/:id/workload-binding',
    {
      ...authed,
      schema: {
        summary:
          'Bind the client to its workload identity (SPIFFE or Entra), proven by a token carrying the client’s DID',
        tags,
        security,
        params: Id,
        body: Type.Object(
          {
            scheme: Type.Union([Type.Literal('spiffe'), Type.Literal('entra')]),
            external_id: Type.String({ minLength: 1, maxLength: 500 }),
            issuer: Type.String({ minLength: 1, maxLength: 500 }),
            jwks_uri: Type.String({ minLength: 1, maxLength: 2000 }),
            token: Type.String({ minLength: 1, maxLength: 16_000 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Client },
      },
    },
    async (request) => bindWorkload(deps, orgOf(request), request.params.id, request.body),
  )
}
