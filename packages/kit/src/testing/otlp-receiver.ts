import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A span as the OTLP/HTTP JSON encoding carries it, with its service's name. */
export interface ReceivedSpan {
  service: string
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  links: Array<{ traceId: string; spanId: string }>
  startMs: number
  endMs: number
}

interface OtlpValue {
  stringValue?: string
  intValue?: string | number
  doubleValue?: number
  boolValue?: boolean
  arrayValue?: { values?: OtlpValue[] }
}
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined

const valueOf = (v: OtlpValue): unknown =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.boolValue ??
  v.arrayValue?.values?.map(valueOf)

const attributesOf = (list: OtlpAttributes) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]))

const nanosToMs = (n: string | number | undefined) => Number(BigInt(n ?? 0) / 1_000_000n)

/**
 * An OTLP/HTTP trace receiver for tests (`POST /v1/traces`): decodes the JSON encoding into spans,
 * and keeps the raw bodies of the protobuf one (their content type and bytes, for a cheaper check).
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = []
  const protobufBodies: Buffer[] = []
  const read = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => resolve(Buffer.concat(chunks)))
      req.on('error', reject)
    })
  const server = createServer((req, res) => {
    void read(req).then((body) => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end()
        return
      }
      const type = req.headers['content-type'] ?? ''
      if (type.startsWith('application/x-protobuf')) {
        protobufBodies.push(body)
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
        return
      }
      const payload = JSON.parse(body.toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: OtlpAttributes }
          scopeSpans?: Array<{
            spans?: Array<{
              traceId: string
              spanId: string
              parentSpanId?: string
              name: string
              kind: number
              attributes?: OtlpAttributes
              links?: Array<{ traceId: string; spanId: string }>
              startTimeUnixNano?: string
              endTimeUnixNano?: string
            }>
          }>
        }>
      }
      for (const rs of payload.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '')
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              startMs: nanosToMs(s.startTimeUnixNano),
              endMs: nanosToMs(s.endTimeUnixNano),
            })
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    /** The OTEL_EXPORTER_OTLP_ENDPOINT to give the services. */
    url: `http://127.0.0.1:${port}`,
    spans,
    protobufBodies,
    /** The spans of one trace. */
    trace: (traceId: string) => spans.filter((s) => s.traceId === traceId),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>
