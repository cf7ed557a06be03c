import { defineArea } from '../../context.ts'
import { clientRoutes } from './routes.ts'
import { backfillClientKeys, clientsService } from './service.ts'

/** What other areas ask of the clients: reads of live and deleted clients, an organization's, and their changes. */
export type ClientsService = typeof clientsService

/** The clients' reads other areas share: a client's public columns, a live client's whole row. */
export { clientById, clientRow } from './store.ts'
/** Client authentication at the token, PAR, device, revocation and signal endpoints. */
export {
  ASSERTION_ALGS,
  authenticateClient,
  type ClientAuthDeps,
  type ClientCredentials,
  JWT_BEARER,
  SECRET_METHODS,
} from './client-auth.ts'

export { forgetClients } from './cache.ts'
/** Where the hosted pages lead a person back to: the flow's client, else svc's console. */
export {
  type AppHome,
  clientHome,
  consoleHome,
  flowClientId,
  homeOf,
  onwardOf,
  type OnwardApp,
} from './home.ts'
export { Client, CreatedClient, NewClient } from './schemas.ts'
export {
  checkClientUris,
  clientView,
  createClient,
  rotateClientSecret,
  rotateWebhookSecret,
  webhookSecretOf,
} from './service.ts'

/** OAuth clients: the management API and each client's did:key. */
export const clientsArea = defineArea({
  name: 'clients',
  async mount(app, ctx): Promise<ClientsService> {
    clientRoutes(app, ctx.db, ctx.sealer, ctx.config.adminToken, ctx.config.fetchAllowPrivate)
    await backfillClientKeys(ctx.db, ctx.sealer)
    return clientsService
  },
})
