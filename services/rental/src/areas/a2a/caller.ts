/**
 * Who calls the rental over A2A (the `agt_` token the route verified) and how the rental's refusals
 * become JSON-RPC errors.
 */
import type { ServerCallContext, User } from '@a2a-js/sdk/server'
import { AppError } from '@svc/kit'
import { badRequest, errorInfo, type JsonRpcErrorObject, retryInfo, rethrow } from '@svc/kit/http/a2a-jsonrpc'
import type { VerifiedApiToken } from '../tokens/service.ts'
import { CONCURRENCY_RETRY_AFTER_S } from '../tasks/index.ts'

/** The A2A scopes of an `agt_` token's policy (areas/tokens/scopes.ts); each method needs its own. */
export const SCOPES = { read: 'tasks:read', write: 'tasks:write' } as const
type Scope = (typeof SCOPES)[keyof typeof SCOPES]

/** Custom JSON-RPC code (outside JSON-RPC's and A2A's reserved ranges) for an authorization refusal. */
export const PERMISSION_DENIED_CODE = -31403

/** The form of task, engagement and file ids a call may name. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/

/** The caller the route authenticated: its verified token. */
export class TokenUser implements User {
  constructor(readonly token: VerifiedApiToken) {}
  get isAuthenticated() {
    return true
  }
  get userName() {
    return this.token.owner
  }
}

/** An authorization refusal (scope or engagement outside the token's policy). */
export class PermissionDenied extends Error {
  constructor(
    message: string,
    readonly metadata: Record<string, string>,
  ) {
    super(message)
  }
}

/** A refusal of the request's parameters from a rule of the rental (unknown engagement, …). */
export class InvalidParams extends Error {
  constructor(
    message: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(message)
  }
}

/** The rental's own errors as JSON-RPC errors; the rest is left to the SDK's mapping. */
export function mapRentalError(err: unknown): JsonRpcErrorObject | undefined {
  if (err instanceof PermissionDenied)
    return {
      code: PERMISSION_DENIED_CODE,
      message: err.message,
      data: [errorInfo('PERMISSION_DENIED', err.metadata)],
    }
  if (err instanceof InvalidParams)
    return {
      code: -32602,
      message: err.message,
      data: [errorInfo(err.reason), badRequest(err.field, err.message)],
    }
  // over the engagement's capacity: A2A §3.3's system errors put "rate limit exceeded" under
  // JSON-RPC -32603 with retry guidance (google.rpc.RetryInfo: the console's Retry-After)
  if (err instanceof AppError && err.status === 429)
    return {
      code: -32603,
      message: err.message,
      data: [
        errorInfo(err.code.toUpperCase()),
        retryInfo(Number(err.headers['retry-after'] ?? CONCURRENCY_RETRY_AFTER_S)),
      ],
    }
  if (err instanceof AppError && err.status < 500)
    return {
      code: -32602,
      message: err.message,
      data: [errorInfo(err.code.toUpperCase())],
    }
  return undefined
}

/** The caller's token, if it holds the scope the method needs. */
export function tokenOf(context: ServerCallContext, scope: Scope): VerifiedApiToken {
  const user = context.user
  if (!(user instanceof TokenUser)) throw new PermissionDenied('no API token', {})
  const { token } = user
  if (!token.scopes.includes(scope))
    throw new PermissionDenied(`the token lacks the scope ${scope}`, { requiredScope: scope })
  return token
}

export const mayAct = (token: VerifiedApiToken, engagementId: string) =>
  token.engagementIds === null || token.engagementIds.includes(engagementId)

/** Runs a call, keeping what it throws for the adapter's mapping of the rental's errors. */
export async function guarded<T>(context: ServerCallContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    return rethrow(context, err)
  }
}
