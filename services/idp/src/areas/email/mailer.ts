import type { Jobs, Sealer } from '@svc/kit'
import { createTransport, type Transporter } from 'nodemailer'
import type { IdpDb } from '../../db.ts'
import { insertOutboxMail } from './store.ts'

export const EMAIL_QUEUE = 'email.send'
const SEAL_CONTEXT = 'email-job'

export interface Email {
  to: string
  subject: string
  text: string
}

export interface MailerOptions {
  jobs: Jobs
  sealer: Sealer
  /** smtp:// or smtps:// with credentials; unset means the development outbox. */
  smtpUrl: string | undefined
  from: string
}

/**
 * Sends the idp's email. With a mail server, each email is a job enqueued in the caller's
 * transaction (so it goes exactly when the action that sends it commits) and retried when the
 * server refuses; its content, which may hold a sign-in link, is sealed while it waits. Without
 * one (development), email lands in the outbox shown at /ui/dev/outbox.
 */
export class Mailer {
  readonly #transport: Transporter | undefined

  constructor(private readonly options: MailerOptions) {
    this.#transport = options.smtpUrl ? createTransport(options.smtpUrl) : undefined
  }

  async start(): Promise<void> {
    if (!this.#transport) return
    await this.options.jobs.queue(EMAIL_QUEUE, { retryLimit: 6, retryDelay: 5, retryBackoff: true })
    await this.options.jobs.work<{ sealed: string }>(EMAIL_QUEUE, (job) => this.#deliver(job.sealed), {
      pollingIntervalSeconds: 0.5,
    })
  }

  async send(db: IdpDb, email: Email): Promise<void> {
    if (!this.#transport) {
      await insertOutboxMail(db, { recipient: email.to, subject: email.subject, body: email.text })
      return
    }
    const sealed = this.options.sealer.seal(JSON.stringify(email), SEAL_CONTEXT).toString('base64')
    await this.options.jobs.enqueue(db, EMAIL_QUEUE, { sealed })
  }

  async #deliver(sealed: string): Promise<void> {
    const email = JSON.parse(
      this.options.sealer.open(Buffer.from(sealed, 'base64'), SEAL_CONTEXT).toString('utf8'),
    ) as Email
    await this.#transport!.sendMail({ from: this.options.from, ...email })
  }

  close(): void {
    this.#transport?.close()
  }
}
