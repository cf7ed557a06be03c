import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { bundledMain } from '@svc/testing/bundled-main'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import type { Browser } from 'playwright-core'
import { DEMO_EMAIL } from '../../../services/idp/src/areas/accounts/index.ts'
import { type FullStack, startFullStack } from '../../../services/rental/test/support/full-stack.ts'
import { answerOnPage } from '../../client/test/support.ts'

const executable = chromiumPath()
const BIN = fileURLToPath(new URL('../bin/svc.js', import.meta.url))
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const PASSPHRASE = 'a passphrase kept apart'
const INVOICE = 'Invoice INV-1042, Gulf Supplies LLC\n3 x Printer paper @ 25.00 AED = 75.00 AED'

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

describe(
  'svc, the command line, as a process against the running stack',
  { skip: executable ? false : NO_CHROMIUM },
  () => {
    let stack: FullStack
    let browser: Browser
    const home = mkdtempSync(join(tmpdir(), 'svc-home-'))
    const work = mkdtempSync(join(tmpdir(), 'svc-work-'))
    let engagement = ''
    const tasks: string[] = []
    // the command line bundled once into plain JavaScript: each `svc` then starts in a fraction of
    // the time tsx's compiling takes (bin/svc.js itself is run by the first test)
    let bundled = ''

    /** `svc ARGS` with SVC_HOME in a temporary folder; `onStderr` sees its stderr as it comes. */
    function svc(
      args: string[],
      options: { home?: string; onStderr?: (text: string) => void; bin?: string } = {},
    ): Promise<Run> {
      const child = spawn(process.execPath, [options.bin ?? bundled, ...args], {
        env: {
          ...process.env,
          SVC_HOME: options.home ?? home,
          SVC_IDP_URL: stack.idp.url,
          SVC_RENTAL_URL: stack.rental.url,
          SVC_LEDGER_URL: stack.ledger.url,
          SVC_KEY_PASSPHRASE: PASSPHRASE,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
        options.onStderr?.(stderr)
      })
      return new Promise((resolve, reject) => {
        child.on('error', reject)
        child.on('close', (code) => resolve({ code, stdout, stderr }))
      })
    }
    const json = (run: Run) => {
      assert.doesNotThrow(
        () => JSON.parse(run.stdout),
        `one JSON document on stdout: ${run.stdout}${run.stderr}`,
      )
      return JSON.parse(run.stdout) as Record<string, unknown> & { error?: { code: string; message: string } }
    }
    /** A failure as a person reads it: one sentence on stderr, no stack trace. */
    const oneSentence = (run: Run) => {
      assert.notEqual(run.code, 0)
      const lines = run.stderr.trim().split('\n')
      assert.equal(lines.length, 1, `one line: ${run.stderr}`)
      assert.match(lines[0]!, /^svc: [A-Z].*\.$/)
      assert.doesNotMatch(run.stderr, /\n\s+at |Error:/)
    }

    before(async () => {
      // the agents restart slowed down for `task run --timeout`
      ;[stack, bundled] = await Promise.all([
        startFullStack({}, { agentsRestartable: true }),
        bundledMain(MAIN),
      ])
      browser = await launchChromium(executable!)
    })
    after(async () => {
      await browser?.close()
      await stack?.close()
    })

    it('says to run `svc login` with no credentials, in words and in --json', async () => {
      // as installed: bin/svc.js runs the TypeScript through tsx
      const run = await svc(['whoami'], { bin: BIN })
      oneSentence(run)
      assert.match(run.stderr, /run `svc login`/)
      const asJson = await svc(['market', '--json'])
      assert.equal(asJson.code, 1)
      assert.equal(json(asJson).error?.code, 'not_signed_in')
    })

    it('answers wrong input with one sentence and a non-zero exit', async () => {
      const missing = await svc(['hire'])
      oneSentence(missing)
      assert.equal(missing.code, 2)
      assert.match(missing.stderr, /job/)
      oneSentence(await svc(['nonsense']))
      oneSentence(await svc(['receipt', 'verify']))
    })

    it('signs in by the device grant, allowed on the idp’s page in Chromium; the files are the person’s alone', async () => {
      let allowed: Promise<string> | undefined
      const run = await svc(['login', '--no-browser', '--json'], {
        onStderr: (text) => {
          const url = /go straight to (\S+),/.exec(text)?.[1]
          if (url && !allowed) allowed = answerOnPage(browser, stack, url)
        },
      })
      assert.ok(allowed, `the code was shown: ${run.stderr}`)
      assert.match(await allowed, /Device connected/)
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stderr, /enter the code [A-Z]{4}-[A-Z]{4}/)
      assert.match(run.stderr, /[▀▄█]/, 'a QR code in the terminal')
      const answer = json(run) as { signed_in: boolean; person: { email: string } }
      assert.equal(answer.signed_in, true)
      assert.equal(answer.person.email, DEMO_EMAIL)
      assert.equal(statSync(home).mode & 0o777, 0o700)
      assert.equal(statSync(join(home, 'credentials.json')).mode & 0o777, 0o600)
      assert.ok(JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8')).tokens.refresh_token)

      const who = await svc(['whoami'])
      assert.equal(who.code, 0, who.stderr)
      assert.match(who.stdout, new RegExp(DEMO_EMAIL))

      // an access token about to run out is refreshed first, and the rotated refresh token kept
      const file = join(home, 'credentials.json')
      const kept = JSON.parse(readFileSync(file, 'utf8')) as {
        tokens: { refresh_token: string; expires_at: number }
      }
      writeFileSync(file, JSON.stringify({ ...kept, tokens: { ...kept.tokens, expires_at: Date.now() } }))
      assert.equal((await svc(['whoami'])).code, 0)
      const refreshed = JSON.parse(readFileSync(file, 'utf8')) as typeof kept
      assert.notEqual(refreshed.tokens.refresh_token, kept.tokens.refresh_token)
      assert.ok(refreshed.tokens.expires_at > Date.now() + 60_000)
      assert.equal(statSync(file).mode & 0o777, 0o600)
    })

    it('refreshes once for four `svc` started together with an expired access token: the idp sees no reuse', async () => {
      const file = join(home, 'credentials.json')
      const lock = join(home, 'credentials.json.lock')
      type Kept = { tokens: { refresh_token: string; expires_at: number } }
      const expire = () => {
        const kept = JSON.parse(readFileSync(file, 'utf8')) as Kept
        writeFileSync(file, JSON.stringify({ ...kept, tokens: { ...kept.tokens, expires_at: Date.now() } }))
        return kept.tokens.refresh_token
      }
      const kept = () => (JSON.parse(readFileSync(file, 'utf8')) as Kept).tokens

      // the four read the same expired tokens: the lock is held here (by this live process) until
      // they surely have, a few times as long as one `svc whoami` takes
      let started = Date.now()
      assert.equal((await svc(['whoami'])).code, 0)
      const hold = Math.min(20_000, Math.max(2_000, 3 * (Date.now() - started)))
      const first = expire()
      writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), id: 'the test' }))
      started = Date.now()
      const running = Promise.all([1, 2, 3, 4].map(() => svc(['whoami', '--json'])))
      await new Promise((resolve) => setTimeout(resolve, hold))
      assert.equal(kept().refresh_token, first, 'nobody refreshed while the lock was held')
      rmSync(lock)
      const runs = await running
      for (const run of runs) assert.equal(run.code, 0, run.stderr)
      assert.notEqual(kept().refresh_token, first)
      assert.ok(kept().expires_at > Date.now() + 60_000)
      assert.equal(statSync(file).mode & 0o777, 0o600)
      assert.equal(existsSync(lock), false, 'the lock is let go')

      // the kept refresh token still works (a reused one would have ended its whole family), even
      // past a lock left by a process that died
      const dead = spawnSync(process.execPath, ['-e', '']).pid
      writeFileSync(lock, JSON.stringify({ pid: dead, host: hostname(), id: 'gone' }))
      const second = expire()
      const after = await svc(['whoami'])
      assert.equal(after.code, 0, after.stderr)
      assert.match(after.stdout, new RegExp(DEMO_EMAIL))
      assert.notEqual(kept().refresh_token, second)
      assert.equal(existsSync(lock), false)
    })

    it('shows the market with names and prices as money', async () => {
      const run = await svc(['market', 'invoice'])
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, /AED \d+\.\d\d a task/)
      const answer = json(await svc(['market', '--json'])) as {
        jobs: Array<{ id: string; title: string; price: { display: string } }>
        listings: unknown[]
      }
      const job = answer.jobs.find((j) => j.id === 'job_invoice_check')!
      assert.ok(run.stdout.includes(job.title), 'the job by its title')
      assert.match(job.price.display, /^AED \d+\.\d\d$/)
    })

    it('hires with --yes: the agreement in words with its hash, signed with a key made on first need', async () => {
      await stack.agentOf('job_invoice_check')
      const run = await svc(['hire', 'job_invoice_check', '--yes', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const answer = json(run) as {
        engagement: { id: string; state: string; client_did: string }
        agreement: Array<{ hash: string; words: string }>
      }
      assert.equal(answer.engagement.state, 'active')
      engagement = answer.engagement.id
      assert.match(run.stderr, /You pay AED \d+\.\d\d per task to .+ for “/)
      for (const part of answer.agreement) assert.ok(run.stderr.includes(part.hash), 'each hash shown')
      const key = JSON.parse(readFileSync(join(home, 'key.json'), 'utf8')) as { format: string; did: string }
      assert.equal(key.format, 'svc-rental-client-key/v1')
      assert.equal(key.did, answer.engagement.client_did)
      assert.equal(statSync(join(home, 'key.json')).mode & 0o777, 0o600)
      const shown = await svc(['key', 'show'])
      assert.ok(shown.stdout.includes(key.did))
    })

    it('runs tasks: progress from the event stream on stderr, the output on stdout; a later task’s escrow signed', async () => {
      const first = await svc(['task', 'run', engagement, INVOICE])
      assert.equal(first.code, 0, first.stderr)
      assert.match(first.stderr, /→ completed/)
      assert.ok(first.stdout.trim().length > 0, 'the output')
      assert.doesNotMatch(first.stdout, /→/)
      const lines = join(work, 'lines.txt')
      writeFileSync(lines, 'Printer paper: 3 at AED 25.00\n')
      const second = json(await svc(['task', 'run', engagement, INVOICE, '--file', lines, '--json'])) as {
        task: { id: string; state: string; engagement_id: string; file_ids: string[] }
      }
      assert.equal(second.task.state, 'completed')
      assert.equal(second.task.file_ids.length, 1, 'the file went with the task')
      const listed = json(await svc(['tasks', '--json'])) as { tasks: Array<{ id: string }> }
      assert.equal(listed.tasks.length, 2)
      tasks.push(...listed.tasks.map((t) => t.id))
      const got = await svc(['task', 'get', second.task.id])
      assert.equal(got.code, 0, got.stderr)
      assert.match(got.stdout, /completed, AED \d+\.\d\d/)
    })

    it('verifies a receipt offline, each check named; a tampered one fails with exit 1', async () => {
      const saved = join(work, 'receipt.json')
      const run = await svc(['receipt', 'verify', tasks[0]!, '--save', saved])
      assert.equal(run.code, 0, run.stdout + run.stderr)
      for (const check of ['receipt signature', 'leaf hash', 'checkpoint signature', 'inclusion proof'])
        assert.match(run.stdout, new RegExp(`ok +${check}`))
      const again = json(await svc(['receipt', 'verify', '--bundle', saved, '--json'])) as { ok: boolean }
      assert.equal(again.ok, true, 'offline, from the saved bundle')

      const kept = JSON.parse(readFileSync(saved, 'utf8')) as { bundle: { receipt: Record<string, unknown> } }
      kept.bundle.receipt.issued_at = '2000-01-01T00:00:00Z'
      writeFileSync(saved, JSON.stringify(kept))
      const tampered = await svc(['receipt', 'verify', '--bundle', saved])
      assert.equal(tampered.code, 1)
      assert.match(tampered.stdout, /FAIL receipt signature/)
    })

    it('releases every completed task’s payment, and shows the statement as CSV and as JSON', async () => {
      const run = await svc(['release', engagement, '--all', '--yes', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const released = (json(run) as { released: Array<{ task_id: string; amount: string }> }).released
      assert.deepEqual(released.map((r) => r.task_id).sort(), [...tasks].sort())
      assert.match(released[0]!.amount, /^AED \d+\.\d\d$/)
      const none = await svc(['release', engagement, '--yes'])
      assert.match(none.stdout, /Nothing waits to be paid/)

      const csv = await svc(['statement', '--csv'])
      assert.equal(csv.code, 0, csv.stderr)
      const lines = csv.stdout.trim().split('\n')
      assert.ok(lines.length > 2 && lines[0]!.includes(','), csv.stdout)
      const statement = json(await svc(['statement', '--json'])) as { movements: Array<{ kind: string }> }
      assert.ok(statement.movements.some((m) => m.kind === 'release'))
      oneSentence(await svc(['statement', '--from', 'yesterday']))
      oneSentence(await svc(['task', 'get', 'task_none']))
    })

    it('stops waiting after --timeout: the task goes on, the command to see it is shown, exit 3', async () => {
      // each task takes 2.5 s at the agent from now: longer than `task run --timeout 1`
      await stack.stopAgents()
      await stack.startAgents({ AGENTS_DELAY_MS: '2500' })
      const run = await svc(['task', 'run', engagement, INVOICE, '--timeout', '1'])
      assert.equal(run.code, 3, run.stderr)
      assert.equal(run.stdout, '', 'no output yet')
      const id = /Task (\S+) is still running/.exec(run.stderr)?.[1]
      assert.ok(id, run.stderr)
      assert.ok(run.stderr.includes(`\`svc task get ${id}\``), run.stderr)
      const ended = async (task: string) => {
        for (const from = Date.now(); Date.now() - from < 20_000;) {
          const got = json(await svc(['task', 'get', task, '--json'])) as { task: { state: string } }
          if (got.task.state !== 'submitted' && got.task.state !== 'working') return got.task.state
        }
        return 'still running'
      }
      assert.equal(await ended(id), 'completed', 'the task was not canceled')

      const asJson = await svc(['task', 'run', engagement, INVOICE, '--timeout', '1', '--json'])
      assert.equal(asJson.code, 3, asJson.stderr)
      const answer = json(asJson) as { still_running: boolean; task: { id: string; state: string } }
      assert.equal(answer.still_running, true)
      assert.match(answer.task.state, /^(submitted|working)$/)
      assert.equal(await ended(answer.task.id), 'completed')

      const wrong = await svc(['task', 'run', engagement, INVOICE, '--timeout', 'soon'])
      oneSentence(wrong)
      assert.equal(wrong.code, 2)
      const help = await svc(['task', 'run', '--help'])
      assert.match(help.stdout, /--timeout <seconds>/)
      assert.match(help.stdout, /3 still running after --timeout/)
    })

    it('backs the key up in the console’s format, restores it in another home, and signs out', async () => {
      const file = join(work, 'key-backup.json')
      const backup = await svc(['key', 'backup', file])
      assert.equal(backup.code, 0, backup.stderr)
      const other = mkdtempSync(join(tmpdir(), 'svc-home-'))
      const restored = json(await svc(['key', 'restore', file, '--json'], { home: other })) as { did: string }
      assert.equal(restored.did, JSON.parse(readFileSync(file, 'utf8')).did)

      // the same sign-in kept in another home: revoked by the logout, it ends there too
      copyFileSync(join(home, 'credentials.json'), join(other, 'credentials.json'))
      const out = await svc(['logout'])
      assert.equal(out.code, 0, out.stderr)
      assert.match(out.stdout, /Signed out/)
      oneSentence(await svc(['whoami']))
      let revoked: Run | undefined
      for (const from = Date.now(); Date.now() - from < 12_000;) {
        revoked = await svc(['whoami'], { home: other })
        if (revoked.code !== 0) break
      }
      oneSentence(revoked!)
      assert.match(revoked!.stderr, /sign-in has ended .*run `svc login`/)
    })
  },
)
