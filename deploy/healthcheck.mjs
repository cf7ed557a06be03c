/* global process, fetch, AbortSignal */
// The container's HEALTHCHECK: GET /readyz of the service this container runs (SERVICE), on its
// port (IDP_PORT… or the default). Exit 0 when ready (or degraded: Redis down, still serving).
const defaults = { idp: 4000, ledger: 4100, rental: 4200, agents: 4300 }
const service = process.env.SERVICE ?? 'idp'
const port = process.env[`${service.toUpperCase()}_PORT`] ?? defaults[service]
try {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2500) })
  process.exit(res.ok ? 0 : 1)
} catch {
  process.exit(1)
}
