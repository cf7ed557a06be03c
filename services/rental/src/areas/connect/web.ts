import { randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import {
  getFromPublicUrl,
  pinnedAgent,
  PublicUrlError,
  publicAgent,
  resolvePublic,
} from '@svc/kit/http/public-fetch'
import type { Agent } from 'undici'
import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { WebPolicy } from '../egress/index.ts'
import type { Actor } from '../events/index.ts'
import type { CallDeps, Credential } from './calls.ts'
import { sha256 } from './service.ts'
import { fetchesOfTask, insertFetch, updateFetch } from './web-store.ts'

/** Where an agent asks the rental to fetch a web page for its task (its task's credential as a Bearer token). */
export const WEB_PATH = '/api/web/fetch'
/** Bytes read at most when the policy sets no max_bytes. */
const DEFAULT_MAX_BYTES = 1024 * 1024
const MAX_REDIRECTS = 3

/** Why the web policy refuses a host, or null. */
function webRefusal(deps: CallDeps, policy: WebPolicy, host: string): string | null {
  const bare = host.replace(/^\[|\]$/g, '')
  const denied = policy.denied_domains.find((d) => deps.egress.hostMatches(d, bare))
  if (denied) return `${bare} is denied by the engagement's web policy (${denied})`
  if (policy.allowed_domains.length && !policy.allowed_domains.some((d) => deps.egress.hostMatches(d, bare)))
    return `${bare} is outside the engagement's allowed web domains`
  return null
}

/** The dispatcher one hop uses: pinned to the addresses checked (egress's, or resolved here). */
function agentFor(
  deps: CallDeps,
  url: string,
  checked: Awaited<ReturnType<CallDeps['egress']['checkEgress']>>,
) {
  const allowPrivate = deps.config.connect.allowPrivate
  if (allowPrivate) return { agent: publicAgent({ allowPrivate: true }), close: true }
  // an address literal has nothing to pin: the guarded agent refuses a private one
  return checked.addresses
    ? { agent: pinnedAgent(new URL(url).hostname, checked.addresses), close: true }
    : { agent: publicAgent({ allowPrivate }) as Agent, close: true }
}

/**
 * Fetches a web page for an agent's running task: the engagement's web policy (domains with
 * wildcards, fetches per task, bytes) and egress policy checked before any connection and again
 * for every redirect; the kit's public fetch rules (https and public addresses outside development
 * and tests, the connection pinned to the checked addresses). A refusal is 403 `web_refused` and a
 * `web.refused` event; a page fetched is a `web.fetched` event and receipt (URL and content hashes).
 */
export async function webFetch(deps: CallDeps, credential: Credential, input: { url: string }) {
  let first: URL
  try {
    first = new URL(input.url)
  } catch {
    throw rentalError('invalid_request', 'body.url is not an absolute URL')
  }
  const actor: Actor = { type: 'agent', id: credential.agentDid }
  const id = `web_${randomBytes(12).toString('base64url')}`
  const base = {
    id,
    org_id: credential.org_id,
    engagement_id: credential.engagement_id,
    task_id: credential.task_id,
    agent_did: credential.agentDid,
    url: first.href,
  }
  /** Whether the fetch's row is written (it counts against the task's limit from then on). */
  let placed = false
  const refuse = async (reason: string, policyVersion: number | null): Promise<never> => {
    await inTransaction(deps.db, async (trx) => {
      if (placed) await updateFetch(trx, id, { state: 'refused', reason })
      else await insertFetch(trx, { ...base, state: 'refused', reason, created_at: deps.now() })
      await deps.events.record(trx, {
        orgId: base.org_id,
        type: 'web.refused',
        stream: base.task_id,
        subjects: { fetch_id: id, task_id: base.task_id, engagement_id: base.engagement_id },
        actor,
        data: { url_sha256: sha256(base.url), host: first.host, reason, policy_version: policyVersion },
      })
    })
    throw rentalError('web_refused', `${reason} (fetch ${id})`)
  }
  const row = await deps.egress.webPolicy(credential.engagement_id)
  if (!row) return refuse('the engagement has no web policy: its agents fetch no web pages', null)
  const { policy, version } = row
  /** A URL (the first, or a redirect's) through both policies; the addresses egress checked. */
  const admit = async (url: URL) => {
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return refuse(`${url.protocol} is not fetched`, version)
    const why = webRefusal(deps, policy, url.hostname)
    if (why) return refuse(why, version)
    const allowPrivate = deps.config.connect.allowPrivate
    try {
      const checked = await deps.egress.checkEgress(credential.engagement_id, url.href, {
        allowPrivate,
        actor,
      })
      if (allowPrivate || checked.addresses) return checked
      // no egress policy resolved it: https and public addresses only, checked here (and pinned)
      const addresses = await resolvePublic(url.href, { allowPrivate })
      return addresses ? { addresses } : {}
    } catch (err) {
      if (err instanceof AppError && err.code === 'egress_refused') return refuse(err.message, version)
      if (err instanceof PublicUrlError) return refuse(`${url.host}: ${err.message}`, version)
      throw err
    }
  }
  let checked = await admit(first)
  // counted under the task's lock: concurrent fetches cannot pass the limit together
  placed = await inTransaction(deps.db, async (trx) => {
    await deps.tasks.taskById(trx, credential.task_id, true)
    const done = await fetchesOfTask(trx, credential.task_id)
    if (policy.max_fetches_per_task !== null && done >= policy.max_fetches_per_task) return false
    await insertFetch(trx, { ...base, state: 'failed', reason: 'in progress', created_at: deps.now() })
    return true
  })
  if (!placed) await refuse(`the task fetched its ${policy.max_fetches_per_task} page(s) already`, version)
  const maxBytes = Math.min(policy.max_bytes ?? DEFAULT_MAX_BYTES, DEFAULT_MAX_BYTES * 8)
  let target = first
  let answer: Awaited<ReturnType<typeof getFromPublicUrl>> | undefined
  let failure: string | undefined
  for (let hop = 0; ; hop++) {
    let hopAgent: { agent: Agent; close: boolean } | undefined
    try {
      hopAgent = agentFor(deps, target.href, checked)
      answer = await getFromPublicUrl(target.href, {
        agent: hopAgent.agent,
        allowPrivate: deps.config.connect.allowPrivate,
        timeoutMs: deps.config.connect.timeoutMs,
        maxBytes,
        headers: { accept: 'text/html, text/plain, text/markdown, application/json;q=0.9, */*;q=0.5' },
      })
    } catch (err) {
      failure = (err as Error).message
      break
    } finally {
      if (hopAgent?.close) void hopAgent.agent.close()
    }
    if (answer.status < 300 || answer.status >= 400 || !answer.location) break
    if (hop >= MAX_REDIRECTS) {
      failure = `redirected more than ${MAX_REDIRECTS} times`
      break
    }
    try {
      target = new URL(answer.location, target)
    } catch {
      failure = 'redirected to a URL that does not parse'
      break
    }
    // no redirect escapes the policies: each target is admitted as the first was
    checked = await admit(target)
  }
  return finish(deps, { id, base, actor, version, target, answer: failure ? undefined : answer, failure })
}

async function finish(
  deps: CallDeps,
  run: {
    id: string
    base: { org_id: string; engagement_id: string; task_id: string; agent_did: string; url: string }
    actor: Actor
    version: number
    target: URL
    answer: Awaited<ReturnType<typeof getFromPublicUrl>> | undefined
    failure: string | undefined
  },
) {
  const { id, base, answer } = run
  const now = deps.now()
  const bytes = answer ? Buffer.byteLength(answer.text, 'utf8') : null
  const contentSha256 = answer ? sha256(answer.text) : null
  const data = {
    fetch_id: id,
    engagement_id: base.engagement_id,
    task_id: base.task_id,
    agent_did: base.agent_did,
    url: base.url,
    url_sha256: sha256(base.url),
    final_url: run.target.href,
    status: answer?.status ?? null,
    bytes,
    content_sha256: contentSha256,
    policy_version: run.version,
    fetched_at: now.toISOString(),
  }
  const receipt = await inTransaction(deps.db, async (trx) => {
    if (!answer) {
      await updateFetch(trx, id, { state: 'failed', reason: run.failure ?? null, final_url: run.target.href })
      await deps.events.record(trx, {
        orgId: base.org_id,
        type: 'web.failed',
        stream: base.task_id,
        subjects: { fetch_id: id, task_id: base.task_id, engagement_id: base.engagement_id },
        actor: run.actor,
        data: { ...data, error: run.failure },
      })
      return undefined
    }
    const made = await deps.receipts.record(trx, { type: 'web.fetched', subject: id, data })
    await updateFetch(trx, id, {
      state: 'fetched',
      reason: null,
      final_url: run.target.href,
      status: answer.status,
      bytes,
      content_sha256: contentSha256,
      receipt_id: made.id,
      receipt_leaf_hash: made.leafHash,
    })
    await deps.events.record(trx, {
      orgId: base.org_id,
      type: 'web.fetched',
      stream: base.task_id,
      subjects: { fetch_id: id, task_id: base.task_id, engagement_id: base.engagement_id },
      actor: run.actor,
      data: { ...data, receipt_id: made.id, leaf_hash: made.leafHash },
    })
    return made
  })
  return {
    id,
    state: answer ? ('fetched' as const) : ('failed' as const),
    url: base.url,
    final_url: run.target.href,
    status: answer?.status ?? null,
    content_type: answer?.contentType ?? null,
    bytes,
    content_sha256: contentSha256,
    error: run.failure ?? null,
    text: answer?.text ?? null,
    receipt: receipt ? { id: receipt.id, leaf_hash: receipt.leafHash } : null,
  }
}
