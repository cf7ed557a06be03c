import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import { SMTPServer } from 'smtp-server'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'
import { csrfOf } from '@svc/testing/idp-flow'

interface Received {
  from: string
  to: string[]
  data: string
}

describe('email through a mail server (SMTP)', () => {
  let service: RunningService<IdpConfig>
  let smtp: SMTPServer
  const received: Received[] = []
  let refuseNext = 0

  before(async () => {
    // a real SMTP server (smtp-server, the Nodemailer project's), with login, as a mail relay would have
    smtp = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'idp' && auth.password === 'mail-secret') return callback(null, { user: 'idp' })
        callback(new Error('wrong credentials'))
      },
      onData(stream, session, callback) {
        let data = ''
        stream.on('data', (chunk: Buffer) => {
          data += chunk.toString('utf8')
        })
        stream.on('end', () => {
          if (refuseNext > 0) {
            refuseNext--
            return callback(Object.assign(new Error('try again later'), { responseCode: 451 }))
          }
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            data,
          })
          callback()
        })
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve))
    const port = (smtp.server.address() as AddressInfo).port
    service = await startService(
      idp,
      testEnv({
        IDP_REGISTER_RATE_PER_MIN: '100',
        IDP_SMTP_URL: `smtp://idp:mail-secret@127.0.0.1:${port}`,
        IDP_MAIL_FROM: 'Trust Platform <no-reply@svc.example>',
      }),
      { fresh: true },
    )
  })
  after(async () => {
    await service.close()
    await new Promise<void>((resolve) => smtp.close(() => resolve()))
  })

  async function arrived(count: number) {
    const deadline = Date.now() + 30_000
    while (received.length < count) {
      if (Date.now() > deadline) throw new Error(`${received.length} of ${count} emails arrived`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  async function register(email: string) {
    const jar = new CookieJar()
    const page = await (await jar.fetch(`${service.url}/ui/register`)).text()
    const res = await jar.fetch(`${service.url}/ui/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), email, password: 'correct horse battery' }).toString(),
    })
    assert.equal(res.status, 200)
  }

  it('sends the confirmation link through the server, and nothing to the outbox', async () => {
    await register('grace@example.com')
    await arrived(1)
    const mail = received[0]!
    assert.equal(mail.from, 'no-reply@svc.example')
    assert.deepEqual(mail.to, ['grace@example.com'])
    assert.match(mail.data, /^Subject: Confirm your email address/m)
    // quoted-printable may fold the long line: unfold before reading the link
    const body = mail.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=')
    const link = /(http\S+\/ui\/verify-email\?token=[A-Za-z0-9_-]+)/.exec(body)![1]!
    assert.equal((await fetch(link)).status, 200)
    const db = service.ctx.database!.db as Kysely<IdpTables>
    assert.equal((await db.selectFrom('dev_outbox').selectAll().execute()).length, 0)
  })

  it('retries when the server refuses for a while', async () => {
    refuseNext = 1
    const before = received.length
    await register('linus@example.com')
    await arrived(before + 1)
    assert.deepEqual(received.at(-1)!.to, ['linus@example.com'])
  })
})
