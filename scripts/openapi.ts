/**
 * `npm run openapi`: writes each service's OpenAPI document to docs/openapi/<service>.json, from the
 * running code (each service started on a throwaway embedded database). A test checks they are current.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../packages/kit/src/paths.ts'
import { type ServiceSpec, startService } from '../packages/kit/src/service.ts'
import { agents } from '../services/agents/src/app.ts'
import { idp } from '../services/idp/src/app.ts'
import { ledger } from '../services/ledger/src/app.ts'
import { rental } from '../services/rental/src/app.ts'

export const SPECS: Array<ServiceSpec<never>> = [idp, ledger, rental, agents] as Array<ServiceSpec<never>>

export const documentPath = (name: string) => join(repoRoot(), 'docs', 'openapi', `${name}.json`)

/** The document a service serves, as the text written to docs/openapi. */
export async function generate(spec: ServiceSpec<never>): Promise<string> {
  const env = {
    ...process.env,
    LOG_LEVEL: 'silent',
    DATABASE_URL: '',
    REDIS_URL: '',
    IDP_ADMIN_TOKEN: 'openapi-generation-token',
  }
  const service = await startService(spec, env, { fresh: true })
  try {
    const document = await (await fetch(`${service.url}/openapi.json`)).json()
    return `${JSON.stringify(document, null, 2)}\n`
  } finally {
    await service.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  mkdirSync(join(repoRoot(), 'docs', 'openapi'), { recursive: true })
  for (const spec of SPECS) {
    writeFileSync(documentPath(spec.name), await generate(spec))
    console.log(`docs/openapi/${spec.name}.json`)
  }
}
