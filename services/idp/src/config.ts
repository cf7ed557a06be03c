import { type CommonConfig, devSecret, readEnv } from '@svc/kit'
import { Type } from 'typebox'

export interface IdpConfig {
  adminToken: string
  /** True when the admin token was generated for this run (development): printed at start. */
  adminTokenGenerated: boolean
}

export function readIdpConfig(env: NodeJS.ProcessEnv, common: CommonConfig): IdpConfig {
  const values = readEnv({ IDP_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })) }, env)
  return {
    adminToken: devSecret('IDP_ADMIN_TOKEN', values.IDP_ADMIN_TOKEN, common.nodeEnv),
    adminTokenGenerated: !values.IDP_ADMIN_TOKEN,
  }
}
