// Database statements as spans: the operation and the table, never the values.
import { context, SpanKind, trace } from '@opentelemetry/api'
import { failSpan, tracerIn } from './tracing.ts'

const FIRST_WORD = /^\s*\(?\s*([a-z]+)/i
const TABLE = /\b(?:from|into|update|join)\s+"?([a-z_][a-z0-9_]*)"?(?:\s*\.\s*"?([a-z_][a-z0-9_]*)"?)?/i

/** The operation (`select`, `insert`, …) and the first table a statement names. */
export function statementSummary(text: string): { operation: string; table: string | undefined } {
  const operation = (FIRST_WORD.exec(text)?.[1] ?? 'query').toLowerCase()
  const m = TABLE.exec(text)
  return { operation, table: m ? (m[2] ?? m[1]) : undefined }
}

/** A database span for a statement that just ran (Kysely's `log`: its duration is known at the end). */
export function recordStatement(text: string, durationMs: number, failed: unknown): void {
  const parent = context.active()
  const tracer = tracerIn(parent)
  if (!tracer || !trace.getSpan(parent)) return
  const { operation, table } = statementSummary(text)
  const end = Date.now()
  const span = tracer.startSpan(
    table ? `${operation} ${table}` : operation,
    {
      kind: SpanKind.CLIENT,
      startTime: end - durationMs,
      attributes: {
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
        ...(table ? { 'db.collection.name': table } : {}),
      },
    },
    parent,
  )
  if (failed) failSpan(span, failed)
  span.end(end)
}
