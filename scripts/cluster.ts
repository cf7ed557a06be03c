/**
 * `npm run cluster`: two instances of each service on the machine's PostgreSQL and Redis
 * (DATABASE_URL, REDIS_URL), behind nginx, round robin. Prints the balancer's URLs and each
 * instance's; Ctrl-C stops them all. Without nginx it says how to install it and exits 0.
 */
import { findNginx, NGINX_MISSING, startCluster } from './cluster/cluster.ts'

const databaseUrl = process.env.DATABASE_URL
const redisUrl = process.env.REDIS_URL
if (!findNginx()) {
  console.log(`npm run cluster: skipped. ${NGINX_MISSING}`)
  process.exit(0)
}
if (!databaseUrl || !redisUrl) {
  console.log(
    'npm run cluster: skipped. Set DATABASE_URL and REDIS_URL (several instances share one PostgreSQL ' +
      'and one Redis), for example:\n  DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run cluster',
  )
  process.exit(0)
}

const started = Date.now()
const cluster = await startCluster({
  databaseUrl,
  redisUrl,
  // its own schemas, kept between runs: cluster_idp, cluster_ledger, cluster_rental
  schemaPrefix: process.env.CLUSTER_SCHEMA_PREFIX ?? 'cluster_',
  basePort: Number(process.env.CLUSTER_BASE_PORT ?? 5000),
})
console.log(`\nCluster ready in ${((Date.now() - started) / 1000).toFixed(1)}s (nginx, round robin)\n`)
for (const [name, url] of Object.entries(cluster.urls)) {
  const members = cluster.instances.filter((i) => i.service === name)
  console.log(
    `${name.padEnd(7)} ${url}  ->  ${members.map((i) => `${i.url} (pid ${i.process.pid})`).join(', ')}`,
  )
}
console.log(
  `\nThe console: ${cluster.urls.rental}/console (demo@svc.local, password ${cluster.devSecret('idp.demo-password')})`,
)
console.log(`nginx configuration: ${cluster.dir}/nginx.conf`)
console.log('Press Ctrl-C to stop.')

let stopping = false
for (const instance of cluster.instances)
  void instance.exited.then((code) => {
    if (!stopping)
      console.log(
        `${instance.service}#${instance.index + 1} exited (code ${code}):\n${instance.tail.join('\n')}`,
      )
  })
const stop = async () => {
  if (stopping) return
  stopping = true
  await cluster.stop()
  console.log('cluster stopped')
  process.exit(0)
}
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())
