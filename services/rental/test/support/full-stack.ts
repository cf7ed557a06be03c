import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { type RunningService, Sealer, startService } from '@svc/kit'
import { type CookieJar, restartablePort, tempFolder, testEnv } from '@svc/kit/testing'
import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { type Ed25519KeyPair, generateEd25519, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import type { Kysely } from 'kysely'
import { agents } from '../../../agents/src/app.ts'
import { createUser } from '../../../idp/src/areas/accounts/service.ts'
import type { IdpDb } from '../../../idp/src/db.ts'
import { idp } from '../../../idp/src/app.ts'
import { ledger } from '../../../ledger/src/app.ts'
import { rental } from '../../src/app.ts'
import { sha256 } from '../../src/areas/auth/hooks.ts'
import type { RentalConfig } from '../../src/config.ts'
import type { RentalTables } from '../../src/db.ts'
import { ADMIN, eventually, type Stack, signIn } from './stack.ts'

/** The rental's development writer token at the ledger. */
export const WRITER = 'dev-ledger-writer-rental'

export interface Client {
  jar: CookieJar
  csrf: string
  me: {
    client: { subject: string }
    organization: { id: string; member_id: string; role: string; permissions: string[] }
  }
}
export interface Answer {
  status: number
  headers: Headers
  text: string
  body: Record<string, unknown>
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** The rental with the clock `now` (its `ctx.now()`: sessions, tasks, schedules), as the idp's tests set theirs. */
export const withClock = (now: () => Date): typeof rental => ({
  ...rental,
  readConfig: (env, common) => ({ ...rental.readConfig(env, common), now }),
})

/**
 * The whole platform as `npm start` links it: the real idp, ledger, agents and rental, each on a
 * throwaway database, with two signed-in clients (alice, and bob: the demo user made another client).
 * A `restartable` rental keeps its database in a data folder of its own (or a named schema on
 * PostgreSQL) and its port, so that `restartRental()` starts it again on the same data.
 */
export async function startFullStack(
  rentalEnv: Record<string, string> = {},
  options: {
    restartable?: boolean
    now?: () => Date
    idpEnv?: Record<string, string>
    /** the ledger's own settings (a longer LEDGER_BATCH_WAIT_MS keeps a receipt on its way for a while) */
    ledgerEnv?: Record<string, string>
    agentsEnv?: Record<string, string>
    agentsRestartable?: boolean
  } = {},
) {
  const idpService = await startService(
    idp,
    testEnv({
      IDP_ADMIN_TOKEN: ADMIN,
      IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
      IDP_TOKEN_RATE_PER_MIN_IP: '0',
      ...options.idpEnv,
    }),
    { fresh: true },
  )
  const ledgerService = await startService(
    ledger,
    testEnv({ LEDGER_BATCH_WAIT_MS: '2', ...options.ledgerEnv }),
    {
      fresh: true,
    },
  )
  // agents on a port of their own can be stopped and started again there (`stopAgents`, `startAgents`)
  const agentsPort = options.agentsRestartable ? await restartablePort() : undefined
  const agentsEnv = testEnv({
    AGENTS_KEY_SEED: Buffer.alloc(32, 7).toString('base64url'),
    IDP_URL: idpService.url,
    // the note-taker answers at once with its held call (tests that wait for it say so)
    AGENTS_TOOL_WAIT_MS: '0',
    ...(agentsPort ? { AGENTS_PORT: String(agentsPort), AGENTS_URL: `http://127.0.0.1:${agentsPort}` } : {}),
    ...options.agentsEnv,
  })
  const startAgents = (extra: Record<string, string> = {}) =>
    startService(agents, { ...agentsEnv, ...extra }, agentsPort ? {} : { fresh: true })
  let agentsService: Awaited<ReturnType<typeof startAgents>> | undefined = await startAgents()
  const env = testEnv({
    IDP_URL: idpService.url,
    LEDGER_URL: ledgerService.url,
    AGENTS_URL: agentsService.url,
    RENTAL_IDP_ADMIN_TOKEN: ADMIN,
    ...(options.restartable
      ? {
          RENTAL_PORT: String(await freePort()),
          DATA_DIR: tempFolder(),
          DATABASE_SCHEMA: `t${Date.now().toString(36)}_rental`,
        }
      : {}),
    ...rentalEnv,
  })
  const startRental = async () => {
    const started = await startService(
      options.now ? withClock(options.now) : rental,
      env,
      options.restartable ? {} : { fresh: true },
    )
    await eventually('the rental is ready', async () => (await fetch(`${started.url}/readyz`)).ok)
    return started
  }
  let rentalService: RunningService<RentalConfig> = await startRental()
  const stack = { idp: idpService, rental: rentalService } as unknown as Stack
  const rentalDb = () => rentalService.ctx.database!.db as Kysely<RentalTables>
  const alice: Client = await signIn(stack)
  const bob: Client = await signIn(stack, undefined, { freshIdpSession: true })
  await rentalDb()
    .updateTable('console_sessions')
    .set({ subject: 'another-client' })
    .where('id_hash', '=', sha256(bob.jar.get('rental_session')!))
    .execute()
  // another client: its own organization, made at its first request
  bob.me = (await (await bob.jar.fetch(`${rentalService.url}/api/me`)).json()) as Client['me']
  let ledgerOpen = true

  /** A console call; the CSRF header is the caller's own unless `csrf: false`. */
  const call = async (
    who: Client,
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: boolean; headers?: Record<string, string> } = {},
  ): Promise<Answer> => {
    const res = await who.jar.fetch(`${rentalService.url}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.csrf === false ? {} : { 'x-csrf-token': who.csrf }),
        ...options.headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    let parsed: Record<string, unknown> = {}
    try {
      parsed = JSON.parse(text) as Record<string, unknown>
    } catch {
      // not JSON (Markdown)
    }
    return { status: res.status, headers: res.headers, text, body: parsed }
  }

  /** The DID of the agent serving a job, once the catalogue has imported it. */
  const agentOf = async (jobId: string) => {
    let did = ''
    await eventually(`the catalogue lists an agent for ${jobId}`, async () => {
      const jobs = (await call(alice, 'GET', '/api/jobs')).body.jobs as Array<{
        id: string
        agents: Array<{ did: string }>
      }>
      did = jobs.find((j) => j.id === jobId)?.agents[0]?.did ?? ''
      return did !== ''
    })
    return did
  }

  /** Hires the agent and signs the SLA and the package's escrow with `key`: an active engagement. */
  /** Signs a hire's package (its SLA and escrows) as `key`, as the client: the engagement's id. */
  const signHire = async (who: Client, hired: Answer, key: Ed25519KeyPair) => {
    if (hired.status !== 200) throw new Error(`hire: ${hired.status} ${hired.text}`)
    const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
    const pkg = hired.body.package as {
      sla: { body: unknown }
      escrows: Array<{ body: unknown; hash: string }>
    }
    const id = (hired.body.engagement as { id: string }).id
    const signed = await call(who, 'POST', `/api/engagements/${id}/signatures`, {
      sla_signature: sign(pkg.sla.body),
      escrow_signatures: pkg.escrows.map((e) => ({ escrow_hash: e.hash, signature: sign(e.body) })),
    })
    if (signed.status !== 200) throw new Error(`sign: ${signed.status} ${signed.text}`)
    return id
  }
  const hireAndSign = async (who: Client, jobId: string, agentDid: string, key: Ed25519KeyPair) =>
    signHire(
      who,
      await call(who, 'POST', '/api/engagements', {
        job_id: jobId,
        agent_did: agentDid,
        client_did: didKeyFromEd25519(key.publicKey),
      }),
      key,
    )
  /** Hires a team (POST /api/teams/{id}/hire) and signs its package: the engagement's id. */
  const hireTeamAndSign = async (who: Client, teamId: string, key: Ed25519KeyPair) =>
    signHire(
      who,
      await call(who, 'POST', `/api/teams/${teamId}/hire`, { client_did: didKeyFromEd25519(key.publicKey) }),
      key,
    )

  /**
   * A person with an idp account of their own (`email`, verified at the idp unless said otherwise),
   * signed in at the rental: a new organization's owner, or the member an invitation to `email` makes.
   */
  const signInWith = async (email: string, options: { verified?: boolean } = {}): Promise<Client> =>
    signIn(stack, undefined, { freshIdpSession: true, account: await idpUser(email, options) })

  /** An account at the idp only (`email` verified unless said otherwise): the rental has never seen it. */
  const idpUser = async (email: string, options: { verified?: boolean } = {}) => {
    const password = `password-of-${email}`
    await createUser(
      idpService.ctx.database!.db as unknown as IdpDb,
      new Sealer(idpService.ctx.config.encryptionKey),
      { email, password, verified: options.verified ?? true },
    )
    return { email, password }
  }

  return {
    idp: idpService,
    /** The rental's environment: what a rental started in a process of its own is given. */
    rentalEnv: env,
    signInWith,
    idpUser,
    ledger: ledgerService,
    get agents() {
      if (!agentsService) throw new Error('the agents are stopped')
      return agentsService
    },
    /** Stops the agents (an `agentsRestartable` stack starts them again on the same port). */
    async stopAgents() {
      await agentsService?.close()
      agentsService = undefined
    },
    /** Starts the stopped agents again, with `env` over their settings (AGENTS_DELAY_MS slows them). */
    async startAgents(env: Record<string, string> = {}) {
      if (!agentsPort) throw new Error('the stack was not started with agentsRestartable')
      agentsService ??= await startAgents(env)
    },
    get rental() {
      return rentalService
    },
    get db() {
      return rentalDb()
    },
    alice,
    bob,
    call,
    agentOf,
    hireAndSign,
    hireTeamAndSign,
    newClientKey: generateEd25519,
    /** Stops the rental and starts it again on the same database (a `restartable` stack only). */
    async restartRental() {
      if (!options.restartable) throw new Error('the stack was not started restartable')
      await rentalService.close()
      rentalService = await startRental()
    },
    /** Stops the ledger (to see the rental without it); close() then leaves it. */
    async stopLedger() {
      ledgerOpen = false
      await ledgerService.close()
    },
    async close() {
      await rentalService.close()
      await agentsService?.close()
      if (ledgerOpen) await ledgerService.close()
      await idpService.close()
    },
  }
}
export type FullStack = Awaited<ReturnType<typeof startFullStack>>
