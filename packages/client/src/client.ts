/**
 * The SDK's front door: a person signed in (a `Session`, or any `send`), their signing key, and the
 * main path as calls: hire and sign, run a task and follow its events, verify its receipt offline,
 * release the payment once. `client.api` and `client.ledger` reach every other route, typed.
 */
import { ledgerApi, type LedgerApi, ok, rentalApi, type RentalApi } from './api.ts'
import type { Session } from './auth.ts'
import { SvcError } from './errors.ts'
import { taskEvents, TERMINAL_STATES } from './events.ts'
import type { paths as RentalApiPaths } from './generated/rental.d.ts'
import type { ClientKey } from './keys.ts'
import type { ReceiptBundle, ReceiptVerdict } from './receipts.ts'
import { signBody, signUnnamed } from './signing.ts'
import { newIdempotencyKey, type Send, type TransportOptions } from './transport.ts'

export interface SvcClientOptions extends Omit<TransportOptions, 'send'> {
  /** The rental's base URL (the local stack: http://127.0.0.1:4200). */
  rental: string
  /** The ledger's base URL (the local stack: http://127.0.0.1:4100). */
  ledger: string
  /** The signed-in person (device grant); or give `send` for another way in. */
  session?: Session
  send?: Send
  /** The client's signing key: needed to hire, pay and accept addenda. */
  key?: ClientKey
  /** The ledger's log key, pinned; else it is read from the ledger once. */
  logKey?: string
}

/** Every write takes the caller's idempotency key, to be resent later with the same one. */
export interface WriteOptions {
  idempotencyKey?: string
}
const keyHeader = (options: WriteOptions = {}) => ({
  'idempotency-key': options.idempotencyKey ?? newIdempotencyKey(),
})

type RentalJson<P extends keyof RentalApiPaths, M extends 'get' | 'post'> = RentalApiPaths[P] extends {
  [K in M]: { responses: { 200: { content: { 'application/json': infer T } } } }
}
  ? T
  : never
export type Task = RentalJson<'/api/tasks/{id}', 'get'>
export type Hired = RentalJson<'/api/engagements', 'post'>
export type Release = RentalJson<'/api/engagements/{id}/releases', 'post'>

export class SvcClient {
  readonly api: RentalApi
  readonly ledger: LedgerApi
  private logKey: string | undefined

  constructor(private readonly options: SvcClientOptions) {
    const send = options.session?.fetch ?? options.send
    this.api = rentalApi(options.rental, { ...options, ...(send ? { send } : {}) })
    this.ledger = ledgerApi(options.ledger)
    this.logKey = options.logKey
  }

  private get key(): ClientKey {
    if (!this.options.key) throw new SvcError('key_required', 0, 'this needs the client’s signing key')
    return this.options.key
  }

  me() {
    return ok(this.api.GET('/api/me'))
  }

  /** The catalogue: each job, its price (fils) and the agents serving it. */
  async jobs() {
    return (await ok(this.api.GET('/api/jobs'))).jobs
  }

  /**
   * Hires `agent_did` for `job_id` under the key's did:key, then signs the SLA and the package's
   * escrow the rental handed over: an active engagement, its first task prepaid.
   */
  async hire(input: { job_id: string; agent_did: string }, options: WriteOptions = {}) {
    const hired = await ok(
      this.api.POST('/api/engagements', {
        body: { ...input, client_did: this.key.did },
        headers: keyHeader(options),
      }),
    )
    const signed = await this.signPackage(hired.engagement.id, hired.package)
    return { ...hired, engagement: signed.engagement }
  }

  /** Signs an engagement's SLA and escrows as handed over (`package` of the hire, or of `GET`). */
  async signPackage(
    engagementId: string,
    pkg: { sla: { body: unknown; hash: string }; escrows: Array<{ body: unknown; hash: string }> },
  ) {
    const escrows = await Promise.all(
      pkg.escrows.map(async (e) => ({ escrow_hash: e.hash, signature: await signBody(this.key, e) })),
    )
    return ok(
      this.api.POST('/api/engagements/{id}/signatures', {
        params: { path: { id: engagementId } },
        body: { sla_signature: await signBody(this.key, pkg.sla), escrow_signatures: escrows },
        headers: keyHeader(),
      }),
    )
  }

  /**
   * Runs a task. A later task comes with an escrow of its own to sign: it is signed here, so the
   * task can be paid. Sync by default (the answer carries the output); `async: true` answers at once.
   */
  async runTask(
    input: { engagement_id: string; text: string; async?: boolean; file_ids?: string[] },
    options: WriteOptions = {},
  ) {
    const created = await ok(this.api.POST('/api/tasks', { body: input, headers: keyHeader(options) }))
    if (created.escrow?.state === 'offered') {
      await ok(
        this.api.POST('/api/engagements/{id}/signatures', {
          params: { path: { id: input.engagement_id } },
          body: {
            escrow_signatures: [
              { escrow_hash: created.escrow.hash, signature: await signBody(this.key, created.escrow) },
            ],
          },
          headers: keyHeader(),
        }),
      )
    }
    return created
  }

  task(id: string) {
    return ok(this.api.GET('/api/tasks/{id}', { params: { path: { id } } }))
  }

  /** The task's events as they happen, until it ends (see events.ts). */
  events(taskId: string, options: { after?: number; signal?: AbortSignal } = {}) {
    return taskEvents(this.api, taskId, options)
  }

  /** The task once it ended (following its events), as `GET /api/tasks/{id}` answers it. */
  async finished(taskId: string): Promise<Task> {
    for await (const _ of this.events(taskId));
    const task = await this.task(taskId)
    if (!TERMINAL_STATES.includes(task.state))
      throw new SvcError('task_not_ended', 0, `task ${taskId} is ${task.state}`)
    return task
  }

  /** The task once its receipt is on the ledger (it is delivered after the task completes). */
  async withReceipt(taskId: string, timeoutMs = 30_000): Promise<Task> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const task = await this.task(taskId)
      if (task.receipt?.ledger_index !== null && task.receipt?.ledger_index !== undefined) return task
      if (task.state !== 'completed' && TERMINAL_STATES.includes(task.state))
        throw new SvcError('task_not_completed', 409, `task ${taskId} is ${task.state}: it has no receipt`)
      if (Date.now() > deadline)
        throw new SvcError('receipt_not_logged', 0, `the receipt of ${taskId} is not on the ledger yet`)
      await new Promise((r) => setTimeout(r, 250))
    }
  }

  /** The ledger's receipt bundle of a log index: all a check offline needs. */
  async bundle(index: number): Promise<ReceiptBundle> {
    return (await ok(
      this.ledger.GET('/v1/entries/{index}/bundle', { params: { path: { index } } }),
    )) as unknown as ReceiptBundle
  }

  /** The ledger's log key (pinned at construction, or read once). */
  async ledgerKey(): Promise<string> {
    this.logKey ??= (await ok(this.ledger.GET('/v1/key'))).verifier_key
    return this.logKey
  }

  /** Checks the task's receipt offline, each check named (see receipts.ts). */
  async verifyReceipt(taskId: string): Promise<ReceiptVerdict & { bundle: ReceiptBundle }> {
    const task = await this.withReceipt(taskId)
    const bundle = await this.bundle(task.receipt!.ledger_index!)
    // loaded on first use: the checks are @svc/trust's, on node:crypto (the seam a browser build leaves out)
    const { verifyBundle } = await import('./receipts.ts')
    const verdict = verifyBundle(bundle, {
      logKey: await this.ledgerKey(),
      subject: task.id,
      ...(task.receipt!.leaf_hash ? { leafHash: task.receipt!.leaf_hash } : {}),
    })
    return { ...verdict, bundle }
  }

  /** The engagement's releases waiting for the client's signature, and escrows still to sign. */
  pending(engagementId: string) {
    return ok(
      this.api.GET('/api/engagements/{id}/releases/pending', { params: { path: { id: engagementId } } }),
    )
  }

  /**
   * Pays one completed task's escrow (`escrow_hash`, else the first waiting): the release body as
   * handed over, signed, under one idempotency key. Sending it again (`prepared.send()`, or the SDK
   * after a lost answer) answers the same transfer: it pays once.
   */
  async prepareRelease(engagementId: string, options: WriteOptions & { escrowHash?: string } = {}) {
    const { releases } = await this.pending(engagementId)
    const release = options.escrowHash
      ? releases.find((r) => r.escrow.hash === options.escrowHash)
      : releases[0]
    if (!release) throw new SvcError('nothing_to_release', 409, `no release waits on ${engagementId}`)
    const request = {
      params: { path: { id: engagementId } },
      body: {
        escrow_hash: release.escrow.hash,
        instruction: {
          body: release.instruction,
          signature: await signUnnamed(this.key, release.instruction),
        },
      },
      headers: keyHeader(options),
    }
    return {
      escrow: release.escrow,
      task: release.task,
      idempotencyKey: request.headers['idempotency-key'],
      send: (): Promise<Release> => ok(this.api.POST('/api/engagements/{id}/releases', request)),
    }
  }

  /** Pays one completed task's escrow once (see prepareRelease). */
  async release(
    engagementId: string,
    options: WriteOptions & { escrowHash?: string } = {},
  ): Promise<Release> {
    return (await this.prepareRelease(engagementId, options)).send()
  }

  /** Accepts the engagement's pending agent version: its addendum, signed as handed over. */
  async acceptVersion(engagementId: string) {
    const { pending } = await ok(
      this.api.GET('/api/engagements/{id}/version', { params: { path: { id: engagementId } } }),
    )
    if (!pending) throw new SvcError('version_not_pending', 409, `no version waits on ${engagementId}`)
    const addendum = pending.addendum as { body: unknown; hash: string }
    return ok(
      this.api.POST('/api/engagements/{id}/version/accept', {
        params: { path: { id: engagementId } },
        body: { addendum_hash: addendum.hash, signature: await signBody(this.key, addendum) },
        headers: keyHeader(),
      }),
    )
  }
}
