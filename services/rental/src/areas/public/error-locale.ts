import type { App } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { fromAcceptLanguage } from '../../http/index.ts'
import { AR_ERRORS } from '../../errors.ts'

type ErrorPayload = { error: { code: string; message: string; detail?: string } }

const isRentalError = (payload: unknown): payload is ErrorPayload => {
  const error = (payload as { error?: unknown } | null)?.error
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  )
}

/** The language of a request's answers: the member's chosen one, else Accept-Language, else English. */
export const localeOf = (request: FastifyRequest) =>
  request.membership?.locale ?? fromAcceptLanguage(request.headers['accept-language']) ?? 'en'

/**
 * Every rental error answer (`{"error": {code, message}}`, wherever it was raised) in the caller's
 * language: for `ar`, `message` is the code's Arabic text and the English message, which may name
 * an id, a state or a limit, moves to `detail`. One `preSerialization` hook on the whole app.
 */
export function localiseErrors(app: App) {
  app.addHook('preSerialization', async (request: FastifyRequest, _reply, payload: unknown) => {
    if (!isRentalError(payload) || localeOf(request) !== 'ar') return payload
    const arabic = (AR_ERRORS as Record<string, string | undefined>)[payload.error.code]
    if (!arabic) return payload
    return { ...payload, error: { ...payload.error, message: arabic, detail: payload.error.message } }
  })
}
