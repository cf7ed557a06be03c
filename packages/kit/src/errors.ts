/** The one error class: an HTTP status, a stable snake_case code and a message safe to show a client. */
export class AppError extends Error {
  readonly status: number
  readonly code: string
  readonly headers: Record<string, string>

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'AppError'
    this.status = status
    this.code = code
    this.headers = headers
  }
}

export const badRequest = (message: string, code = 'invalid_request') => new AppError(400, code, message)
export const unauthorized = (message: string, code = 'unauthorized') => new AppError(401, code, message)
export const forbidden = (message: string, code = 'forbidden') => new AppError(403, code, message)
export const notFound = (message: string, code = 'not_found') => new AppError(404, code, message)
export const conflict = (message: string, code = 'conflict') => new AppError(409, code, message)

/** A configuration problem found at boot: printed to the operator, never sent to a client. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}
