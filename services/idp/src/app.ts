import { fileURLToPath } from 'node:url'
import { AppError, type ServiceSpec, safeEqual } from '@svc/kit'
import { type IdpConfig, readIdpConfig } from './config.ts'

export const idp: ServiceSpec<IdpConfig> = {
  name: 'idp',
  version: '0.1.0',
  description:
    'OAuth 2.0 / OpenID Connect issuer with machine grants, delegation, organizations and trust documents.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  // every idp error body follows RFC 6749 §5.2 (identity-provider.md, Errors)
  errorShape: 'oauth',
  // the idp's /healthz reports {status, db, redis} and answers 503 when one fails (identity-provider.md)
  healthz: 'components',
  readConfig: readIdpConfig,
  metricsGuard: (ctx) => (request) => {
    const token = request.headers['x-admin-token']
    if (typeof token !== 'string' || !safeEqual(token, ctx.config.adminToken))
      throw new AppError(401, 'invalid_token', 'a valid X-Admin-Token header is required')
  },
  banner: (ctx) =>
    ctx.config.adminTokenGenerated
      ? [`development admin token (X-Admin-Token): ${ctx.config.adminToken}`]
      : [],
  async build() {},
}
