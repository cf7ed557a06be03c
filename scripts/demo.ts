/**
 * `npm run demo`: the main path through the SDK (packages/client), against the services `npm start`
 * runs: sign in by the device grant, hire an agent and sign with a key made here, run a task and
 * follow its events, check its receipt offline, and pay (sending the release twice: it pays once).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ClientKey, startDeviceSignIn, SvcClient } from '../packages/client/src/index.ts'
import { CookieJar } from '../packages/kit/src/testing.ts'
import { readTopology } from '../packages/kit/src/topology.ts'

const { idp, rental, ledger } = readTopology()
const INVOICE = [
  'Invoice INV-1042, Gulf Supplies LLC',
  '3 x Printer paper @ 25.00 AED = 75.00 AED',
  '2 x Toner cartridge @ 180.00 AED = 360.00 AED',
  'Subtotal: 435.00 AED',
  'VAT (5%): 21.75 AED',
  'Total: 465.75 AED',
].join('\n')

async function main() {
  const signIn = await startDeviceSignIn({ idp: idp.url, resource: rental.url })
  console.log(`1. sign in: open ${signIn.code.verification_uri} and enter ${signIn.code.user_code}`)
  void allowAsDemoUser(signIn.code.verification_uri_complete!)
  const key = await ClientKey.generate()
  const svc = new SvcClient({ rental: rental.url, ledger: ledger.url, session: await signIn.wait(), key })

  const job = (await svc.jobs()).find((j) => /invoice/i.test(j.title) && j.agents.length > 0)!
  const { engagement } = await svc.hire({ job_id: job.id, agent_did: job.agents[0]!.did })
  console.log(
    `2. hired ${job.agents[0]!.name} for "${job.title}" at AED ${(job.price_fils / 100).toFixed(2)} a task, signed by ${key.did}`,
  )

  const { task } = await svc.runTask({ engagement_id: engagement.id, text: INVOICE, async: true })
  for await (const e of svc.events(task.id))
    console.log(`3. task event ${e.stream_seq}: ${e.type} ${String(e.data.to ?? '')}`)
  console.log((await svc.task(task.id)).output?.text)

  const verdict = await svc.verifyReceipt(task.id)
  for (const c of verdict.checks) console.log(`4. receipt ${c.ok ? 'ok  ' : 'FAIL'} ${c.check}: ${c.detail}`)

  const release = await svc.prepareRelease(engagement.id)
  const [first, again] = [await release.send(), await release.send()]
  console.log(`5. paid, and sent again: one transfer (${first.transfer.id} = ${again.transfer.id})`)
}

/**
 * What the person does in their browser: signs in to the console once as the demo user (the first
 * sign-in makes their organization), then allows the code on the idp's page.
 */
async function allowAsDemoUser(url: string) {
  const password =
    process.env.DEMO_PASSWORD ??
    readFileSync(join(process.env.DATA_DIR ?? '.data', 'idp.demo-password'), 'utf8').trim()
  const jar = new CookieJar()
  const field = (page: string, name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1]?.replaceAll('&amp;', '&') ?? ''
  const post = (to: string, fields: Record<string, string>) =>
    jar.fetch(to, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
  let res = await jar.fetch(`${rental.url}/auth/login`)
  for (let hop = 0; hop < 10 && res.status >= 300 && res.status < 400; hop++) {
    const location = new URL(res.headers.get('location')!, idp.url)
    res = await jar.fetch(location.href)
    if (res.status === 200 && location.pathname === '/ui/login') {
      const page = await res.text()
      const email = process.env.DEMO_EMAIL ?? 'demo@svc.local'
      const fields = { email, password, csrf: field(page, 'csrf'), return_to: field(page, 'return_to') }
      res = await post(`${idp.url}/ui/login`, fields)
    }
  }
  const page = await (await jar.fetch(url)).text()
  await post(`${idp.url}/device`, {
    csrf: field(page, 'csrf'),
    user_code: field(page, 'user_code'),
    decision: 'approve',
  })
}

main().catch((err: Error) => {
  console.error(`\ndemo failed: ${err.message}\n(is \`npm start\` running? the demo uses its demo account)`)
  process.exit(1)
})
