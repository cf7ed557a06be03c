/**
 * The MCP server over stdio as the tests start it before `svc mcp` reads a profile: signed in with
 * the tokens in SVC_TEST_TOKENS (JSON), the key of SVC_TEST_KEY_SEED (base64url), the allowance of
 * SVC_TEST_ALLOW_SPEND (fils). The URLs are SVC_IDP_URL, SVC_RENTAL_URL and SVC_LEDGER_URL.
 */
import { ClientKey, Session, SvcClient } from '@svc/client'
import { serveStdio } from '../../src/mcp/server.ts'

const env = (name: string) => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}
const rental = env('SVC_RENTAL_URL')
const session = await Session.resume({
  idp: env('SVC_IDP_URL'),
  resource: rental,
  tokens: JSON.parse(env('SVC_TEST_TOKENS')) as Session['tokens'],
})
const key = await ClientKey.fromSeed(Buffer.from(env('SVC_TEST_KEY_SEED'), 'base64url'))
const client = new SvcClient({ rental, ledger: env('SVC_LEDGER_URL'), session, key })
const allowance = process.env.SVC_TEST_ALLOW_SPEND
await serveStdio({
  client,
  key: async () => key,
  ...(allowance ? { allowSpendFils: Number(allowance) } : {}),
})
process.exit(0)
