import { defineArea } from '../../context.ts'
import { walletRoutes } from './routes.ts'

/**
 * The wallet: its balance and how it is funded. In development and tests a demo top-up moves money
 * from `external:funding` (the rail's one source of money) with a receipt; in production funding
 * waits for a payment provider. No tables of its own: the rail's journal is the record.
 */
export const walletArea = defineArea({
  name: 'wallet',
  needs: ['engagements'],
  mount: () => undefined,
  routes(app, ctx) {
    walletRoutes(app, ctx)
  },
})
