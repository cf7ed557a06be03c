import { Type } from 'typebox'
import { HttpUrl, Port, readEnv } from './config.ts'

export const SERVICE_NAMES = ['idp', 'ledger', 'rental', 'agents'] as const
export type ServiceName = (typeof SERVICE_NAMES)[number]

export const DEFAULT_PORTS: Record<ServiceName, number> = {
  idp: 4000,
  ledger: 4100,
  rental: 4200,
  agents: 4300,
}

export interface Endpoint {
  port: number
  /** The public base URL, without a trailing slash. */
  url: string
}

const envName = (service: ServiceName, what: 'PORT' | 'URL') => `${service.toUpperCase()}_${what}`

/** Every service's port (`IDP_PORT`…) and public base URL (`IDP_URL`…), defaulting to 127.0.0.1. */
export function readTopology(env: NodeJS.ProcessEnv = process.env): Record<ServiceName, Endpoint> {
  const properties = Object.fromEntries(
    SERVICE_NAMES.flatMap((s) => [
      [envName(s, 'PORT'), Type.Optional(Port)],
      [envName(s, 'URL'), Type.Optional(HttpUrl)],
    ]),
  )
  const values = readEnv(properties, env) as Record<string, number | string | undefined>
  return Object.fromEntries(
    SERVICE_NAMES.map((s) => {
      const port = (values[envName(s, 'PORT')] as number | undefined) ?? DEFAULT_PORTS[s]
      const url = ((values[envName(s, 'URL')] as string | undefined) ?? `http://127.0.0.1:${port}`).replace(
        /\/+$/,
        '',
      )
      return [s, { port, url }]
    }),
  ) as Record<ServiceName, Endpoint>
}
