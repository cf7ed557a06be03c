import type { App, Sealer } from '@svc/kit'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'
import type { IdpDb } from '../../db.ts'
import { Client, ClientId, CreatedClient, ManagedNewClient } from './schemas.ts'
import {
  allClients,
  checkClientUris,
  createClient,
  getClient,
  rotateClientSecret,
  rotateWebhookSecret,
} from './service.ts'

export function clientRoutes(app: App, db: IdpDb, sealer: Sealer, adminToken: string, allowPrivate: boolean) {
  const admin = {
    onRequest: async (request: Parameters<typeof requireAdmin>[0]) => requireAdmin(request, adminToken),
  }
  const tags = ['management']

  app.post(
    '/manage/v1/clients',
    {
      ...admin,
      schema: {
        summary: 'Register a client; its secrets are shown once',
        tags,
        body: ManagedNewClient,
        response: { 201: CreatedClient },
      },
    },
    async (request, reply) => {
      const { client_id: chosenId, ...input } = request.body
      await checkClientUris(input, allowPrivate)
      return reply.code(201).send(await createClient(db, sealer, input, null, chosenId))
    },
  )
  app.get(
    '/manage/v1/clients',
    {
      ...admin,
      schema: {
        summary: 'All clients',
        tags,
        response: { 200: Type.Object({ clients: Type.Array(Client) }) },
      },
    },
    async () => ({ clients: await allClients(db) }),
  )
  app.get(
    '/manage/v1/clients/:client_id',
    { ...admin, schema: { summary: 'One client', tags, params: ClientId, response: { 200: Client } } },
    async (request) => getClient(db, request.params.client_id),
  )
  app.post(
    '/manage/v1/clients/:client_id/rotate-secret',
    {
      ...admin,
      schema: {
        summary:
          'A new client secret (confidential clients); the old one stops working at once on this instance, within 5 s on the others',
        tags,
        params: ClientId,
        response: {
          200: Type.Object({
            client_id: Type.String(),
            client_secret: Type.String(),
            client_secret_expires_at: Type.Integer(),
          }),
        },
      },
    },
    async (request) => rotateClientSecret(db, request.params.client_id),
  )
  app.post(
    '/manage/v1/clients/:client_id/rotate-webhook-secret',
    {
      ...admin,
      schema: {
        summary: 'A new webhook secret; signatures with the old one stop validating at once',
        tags,
        params: ClientId,
        response: { 200: Type.Object({ client_id: Type.String(), webhook_secret: Type.String() }) },
      },
    },
    async (request) => rotateWebhookSecret(db, sealer, request.params.client_id),
  )
}
