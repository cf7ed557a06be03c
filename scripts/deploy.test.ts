/**
 * The deployment files agree with the code: every variable the configuration schemas know is in
 * the README's table and in the Kubernetes manifests; the YAML parses (offline, the `yaml`
 * package); every Deployment probes /readyz and /healthz, has a PodDisruptionBudget, and takes
 * its production secrets from the Secret; the image runs as non-root with a HEALTHCHECK.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parseAllDocuments } from 'yaml'
import { commonEnv } from '../packages/kit/src/config.ts'
import { repoRoot } from '../packages/kit/src/paths.ts'
import { SERVICE_NAMES } from '../packages/kit/src/topology.ts'

const root = repoRoot()
const read = (path: string) => readFileSync(join(root, path), 'utf8')

/** Every variable read through a configuration schema: the kit's, the topology's and each service's. */
function knownVariables(): string[] {
  const names = new Set<string>(Object.keys(commonEnv))
  for (const s of SERVICE_NAMES) for (const what of ['PORT', 'URL']) names.add(`${s.toUpperCase()}_${what}`)
  for (const s of SERVICE_NAMES)
    for (const match of read(`services/${s}/src/config.ts`).matchAll(/^\s+([A-Z][A-Z0-9_]+): Type\./gm))
      names.add(match[1]!)
  return [...names].sort()
}

type Doc = { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown> } & Record<
  string,
  unknown
>

function yamlDocs(path: string): Doc[] {
  const docs = parseAllDocuments(read(path), { merge: true })
  for (const doc of docs) assert.deepEqual(doc.errors, [], `${path} parses`)
  return docs.map((d) => d.toJS() as Doc).filter(Boolean)
}

const manifests = readdirSync(join(root, 'deploy', 'kubernetes'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => `deploy/kubernetes/${f}`)

describe('deployment files', () => {
  const variables = knownVariables()

  it('finds the variables of every schema', () => {
    for (const name of [
      'DATABASE_URL',
      'SHUTDOWN_DELAY_MS',
      'IDP_ADMIN_TOKEN',
      'LEDGER_SIGNING_KEY',
      'RENTAL_FEE_BPS',
    ])
      assert.ok(variables.includes(name), name)
    assert.ok(variables.length > 80, `${variables.length} variables`)
  })

  it("every variable is in the README's table", () => {
    const table = read('README.md')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .join('\n')
    const missing = variables.filter((v) => !table.includes(`\`${v}\``))
    assert.deepEqual(missing, [], 'variables missing from the README table')
  })

  it('every variable is in the Kubernetes manifests (set, or commented with its default)', () => {
    const text = manifests.map(read).join('\n')
    const missing = variables.filter((v) => !new RegExp(`\\b${v}\\b`).test(text))
    assert.deepEqual(missing, [], 'variables missing from deploy/kubernetes')
  })

  it('the manifests parse; each service has probes, a Service, a PodDisruptionBudget and Secret references', () => {
    const docs = manifests.flatMap(yamlDocs)
    const secret = docs.find((d) => d.kind === 'Secret')
    const secretKeys = Object.keys((secret?.stringData as Record<string, string>) ?? {})
    for (const service of SERVICE_NAMES) {
      const deployment = docs.find((d) => d.kind === 'Deployment' && d.metadata?.name === service)
      assert.ok(deployment, `a Deployment for ${service}`)
      assert.ok(
        docs.some((d) => d.kind === 'Service' && d.metadata?.name === service),
        `a Service for ${service}`,
      )
      assert.ok(
        docs.some((d) => d.kind === 'PodDisruptionBudget' && d.metadata?.name === service),
        `a PodDisruptionBudget for ${service}`,
      )
      const spec = deployment.spec as { replicas: number; template: { spec: { containers: Container[] } } }
      assert.ok(spec.replicas >= 2, `${service} runs several instances`)
      const [container] = spec.template.spec.containers
      assert.equal(container!.readinessProbe.httpGet.path, '/readyz')
      assert.equal(container!.livenessProbe.httpGet.path, '/healthz')
      for (const ref of container!.env.filter((e) => e.valueFrom?.secretKeyRef)) {
        assert.equal(ref.valueFrom!.secretKeyRef!.name, 'svc-secrets')
        assert.ok(
          secretKeys.includes(ref.valueFrom!.secretKeyRef!.key),
          `${ref.name} is in the Secret's example`,
        )
      }
    }
  })

  it('the secrets a service requires in production come from the Secret', () => {
    const required: Record<string, string[]> = {
      idp: ['IDP_ADMIN_TOKEN', 'IDP_ENCRYPTION_KEY', 'IDP_PAIRWISE_SALT', 'IDP_LEDGER_TOKEN', 'IDP_SMTP_URL'],
      ledger: ['LEDGER_SIGNING_KEY', 'LEDGER_WRITERS', 'LEDGER_WEBHOOK_KEY'],
      rental: ['RENTAL_IDP_ADMIN_TOKEN', 'RENTAL_ENCRYPTION_KEY', 'RENTAL_LEDGER_TOKEN'],
      agents: ['AGENTS_KEY_SEED'],
    }
    for (const [service, names] of Object.entries(required)) {
      const source = read(`services/${service}/src/config.ts`)
      const manifest = read(`deploy/kubernetes/${service}.yaml`)
      for (const name of names) {
        assert.match(source, new RegExp(`${name} must be set when NODE_ENV=production|${name} \\(or`), name)
        assert.match(manifest, new RegExp(`key: ${name}\\b`), `${service} takes ${name} from the Secret`)
      }
    }
  })

  it('compose.yaml parses: two instances of each service and nginx with its configuration', () => {
    const [compose] = yamlDocs('compose.yaml') as Array<{
      services: Record<string, { environment?: Record<string, string> }>
    }>
    for (const service of SERVICE_NAMES)
      for (const n of [1, 2])
        assert.equal(compose!.services[`${service}-${n}`]?.environment?.SERVICE, service)
    assert.ok(compose!.services.nginx && compose!.services.postgres && compose!.services.redis)
    const nginx = read('deploy/nginx.conf')
    for (const service of SERVICE_NAMES) assert.match(nginx, new RegExp(`upstream ${service} `))
  })

  it('the image runs the production bundle as a non-root user, with a HEALTHCHECK on /readyz', () => {
    const dockerfile = read('Dockerfile')
    assert.match(dockerfile, /^FROM node:20/m)
    assert.match(dockerfile, /^USER node$/m)
    assert.match(dockerfile, /^HEALTHCHECK .*deploy\/healthcheck\.mjs/m)
    assert.match(dockerfile, /\.build\/main\.mjs/)
    assert.match(read('deploy/healthcheck.mjs'), /\/readyz/)
  })
})

interface Container {
  readinessProbe: { httpGet: { path: string } }
  livenessProbe: { httpGet: { path: string } }
  env: Array<{ name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>
}
