import { defineArea } from '../../context.ts'
import { Mailer } from './mailer.ts'

export { consumeEmailToken, issueEmailToken, outbox } from './service.ts'

/** Outgoing mail, through the jobs queue (SMTP, or the development outbox). */
export const emailArea = defineArea({
  name: 'email',
  async mount(app, ctx) {
    const mailer = new Mailer({
      jobs: ctx.jobs,
      sealer: ctx.sealer,
      smtpUrl: ctx.config.smtpUrl,
      from: ctx.config.mailFrom ?? `svc <no-reply@${new URL(ctx.issuer).hostname}>`,
    })
    await mailer.start()
    app.addHook('onClose', async () => mailer.close())
    return mailer
  },
})
