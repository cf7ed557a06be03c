import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { type AddressInfo, createServer } from 'node:net'
import { after, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { onPostgres, request, tempFolder, testEnv } from '@svc/kit/testing'
import { idp } from '../../../idp/src/app.ts'
import type { IdpConfig } from '../../../idp/src/config.ts'
import { rental } from '../../src/app.ts'
import type { RentalConfig } from '../../src/config.ts'
import { ADMIN, eventually } from '../support/stack.ts'

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

// the idp must listen on a port known beforehand, so it runs on an embedded database of its own
describe('rental started before the idp', { skip: onPostgres && 'needs an embedded idp database' }, () => {
  let rentalService: RunningService<RentalConfig> | undefined
  let idpService: RunningService<IdpConfig> | undefined
  after(async () => {
    await rentalService?.close()
    await idpService?.close()
  })

  it('is not ready until the idp answers, then registers its client and becomes ready', async () => {
    const port = await freePort()
    const idpUrl = `http://127.0.0.1:${port}`
    rentalService = await startService(
      rental,
      testEnv({ IDP_URL: idpUrl, AGENTS_URL: 'http://127.0.0.1:9', RENTAL_IDP_ADMIN_TOKEN: ADMIN }),
      { fresh: true },
    )
    assert.equal((await fetch(`${rentalService.url}/readyz`)).status, 503)
    assert.equal((await fetch(`${rentalService.url}/auth/login`, { redirect: 'manual' })).status, 503)
    idpService = await startService(
      idp,
      testEnv({
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_PORT: String(port),
        IDP_URL: idpUrl,
        DATA_DIR: tempFolder(),
        DATABASE_URL: '',
      }),
    )
    await eventually('the rental is ready', async () => (await fetch(`${rentalService!.url}/readyz`)).ok)
    const login = await fetch(`${rentalService.url}/auth/login`, { redirect: 'manual' })
    assert.equal(login.status, 302)
    assert.ok(login.headers.get('location')!.startsWith(`${idpUrl}/authorize?`))
    const clients = (await (
      await fetch(`${idpUrl}/manage/v1/clients`, { headers: { 'x-admin-token': ADMIN } })
    ).json()) as {
      clients: Array<{
        client_name: string
        redirect_uris: string[]
        backchannel_logout_uri: string
        client_uri: string | null
      }>
    }
    const consoleClient = clients.clients.find((c) => c.client_name === 'Rental console')!
    assert.deepEqual(consoleClient.redirect_uris, [`${rentalService.url}/auth/callback`])
    assert.equal(consoleClient.backchannel_logout_uri, `${rentalService.url}/auth/backchannel-logout`)
    // the idp's pages link back to the console by this (RFC 7591 client_uri)
    assert.equal(consoleClient.client_uri, `${rentalService.url}/console`)
  })
})

/** npm start with IDP_ADMIN_TOKEN in the shell (issue 30, item 12): the rental takes the idp's variable. */
describe('the idp admin token the rental registers with', () => {
  const services: Array<RunningService<unknown>> = []
  after(async () => {
    for (const s of services.reverse()) await s.close()
  })

  it('is IDP_ADMIN_TOKEN when RENTAL_IDP_ADMIN_TOKEN is unset; a token the idp refuses is named, not retried in silence', async () => {
    const token = `shell-token-${randomBytes(12).toString('hex')}`
    const idpService = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: token }), { fresh: true })
    services.push(idpService as RunningService<unknown>)
    // a fresh data directory: no development token to fall back on
    const env = { IDP_URL: idpService.url, AGENTS_URL: 'http://127.0.0.1:9', DATA_DIR: tempFolder() }
    const linked = await startService(
      rental,
      testEnv({ ...env, IDP_ADMIN_TOKEN: token, RENTAL_IDP_ADMIN_TOKEN: '' }),
      { fresh: true },
    )
    services.push(linked as RunningService<unknown>)
    await eventually('the rental is ready', async () => (await fetch(`${linked.url}/readyz`)).ok)
    assert.equal((await fetch(`${linked.url}/auth/login`, { redirect: 'manual' })).status, 302)

    const refused = await startService(
      rental,
      testEnv({ ...env, RENTAL_IDP_ADMIN_TOKEN: `another-token-${randomBytes(12).toString('hex')}` }),
      { fresh: true },
    )
    services.push(refused as RunningService<unknown>)
    await eventually('the rental names the refusal', async () => {
      const login = await request(`${refused.url}/auth/login`)
      const message = (login.body.error as { message?: string } | undefined)?.message ?? ''
      return login.status === 503 && message.includes('refused this service’s admin token')
    })
    assert.equal((await fetch(`${refused.url}/readyz`)).status, 503)
  })
})
