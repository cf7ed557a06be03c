import { type App, AppError, html, type Sealer } from '@svc/kit'
import { Type } from 'typebox'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { endSession } from '../sessions/index.ts'
import { type Lang, t } from '../../pages/i18n.ts'
import { sendLocalMessage, sendMessage } from '../../pages/layout.ts'
import {
  type ChangeDeps,
  changePassword,
  checkCurrentPassword,
  confirmEmailChange,
  deleteAccount,
  requestEmailChange,
} from './changes.ts'
import { exportKeyBackup, MIN_PASSPHRASE } from './key-backup.ts'
import { MIN_PASSWORD } from './routes.ts'
import { userByEmail } from '../accounts/index.ts'

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/
const CONFIRM_DELETE = 'delete my account'

/** The account page's forms for changing the password or the address, and for deleting the account. */
export const changeForms = (lang: Lang, csrf: string) =>
  html`<h2>${t(lang, 'Password and address')}</h2>
    <form method="post" action="/ui/account/password">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="current_password">${t(lang, 'Current password')}</label>
      <input id="current_password" name="current_password" type="password" autocomplete="current-password" required />
      <label for="new_password">${t(lang, 'New password (at least {n} characters)', { n: MIN_PASSWORD })}</label>
      <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD}" />
      <button type="submit">${t(lang, 'Change password')}</button>
    </form>
    <form method="post" action="/ui/account/email">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="new_email">${t(lang, 'New email address')}</label>
      <input id="new_email" name="email" type="email" autocomplete="email" required />
      <button type="submit">${t(lang, 'Change address')}</button>
    </form>
    <h2>${t(lang, 'Back up your key')}</h2>
    <p>
      ${t(
        lang,
        'Download your account’s key (its did:key) encrypted under a passphrase of your choice: a JWE (PBES2-HS512+A256KW, A256GCM) holding the private JWK. Keep the passphrase apart from the file.',
      )}
    </p>
    <form method="post" action="/ui/account/key-backup">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="backup_password">${t(lang, 'Current password (if your account has one)')}</label>
      <input id="backup_password" name="current_password" type="password" autocomplete="current-password" />
      <label for="passphrase">${t(lang, 'Passphrase for the backup (at least {n} characters)', { n: MIN_PASSPHRASE })}</label>
      <input id="passphrase" name="passphrase" type="password" autocomplete="new-password" required minlength="${MIN_PASSPHRASE}" />
      <button type="submit">${t(lang, 'Download the backup')}</button>
    </form>
    <h2>${t(lang, 'Delete your account')}</h2>
    <form method="post" action="/ui/account/delete">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="confirm">${t(lang, 'Type “{phrase}” to confirm', { phrase: CONFIRM_DELETE })}</label>
      <input id="confirm" name="confirm" required />
      <button type="submit">${t(lang, 'Delete my account')}</button>
    </form>`

/** Changes the signed-in user makes to the account; each one tells the clients (lifecycle webhooks). */
export function accountChangeRoutes(app: App, deps: ChangeDeps & { origin: string; sealer: Sealer }) {
  const tags = ['pages']
  const signedIn = pageHooks(deps).form('sign in to change your account')

  app.post(
    '/ui/account/password',
    {
      ...signedIn,
      schema: {
        summary: 'Change the password: other sessions end, refresh tokens die, clients are told',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          current_password: Type.String({ maxLength: 1000 }),
          new_password: Type.String({ maxLength: 1000 }),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      if (request.body.new_password.length < MIN_PASSWORD)
        return sendLocalMessage(
          reply,
          400,
          'Password too short',
          'Choose a password of at least {n} characters.',
          { n: MIN_PASSWORD },
        )
      try {
        await checkCurrentPassword(deps.db, session.user_id, request.body.current_password)
      } catch {
        return sendLocalMessage(reply, 400, 'Password not changed', 'The current password is not right.')
      }
      await changePassword(deps, session.user_id, request.body.new_password, 'account', {
        ip: request.ip,
        keepSid: session.sid,
      })
      return sendLocalMessage(
        reply,
        200,
        'Password changed',
        'Your password is changed; your other sessions are signed out.',
      )
    },
  )

  app.post(
    '/ui/account/email',
    {
      ...signedIn,
      schema: {
        summary: 'Change the address: a link goes to the new one, nothing changes until it is followed',
        tags,
        body: Type.Object({ csrf: Type.String({ maxLength: 100 }), email: Type.String({ maxLength: 320 }) }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const email = request.body.email.trim()
      if (!EMAIL.test(email))
        return sendLocalMessage(reply, 400, 'Address not changed', 'Enter a valid email address.')
      // the same answer whether or not the address is taken: no account is revealed
      if (!(await userByEmail(deps.db, email))) await requestEmailChange(deps, session.user_id, email)
      return sendLocalMessage(
        reply,
        200,
        'Check your inbox',
        'Follow the link sent to {email} to confirm it.',
        {
          email,
        },
      )
    },
  )

  app.get(
    '/ui/account/email/confirm',
    {
      schema: {
        summary: 'Confirm a new address from the link sent to it',
        tags,
        querystring: Type.Object({ token: Type.String({ maxLength: 100 }) }),
      },
    },
    async (request, reply) => {
      try {
        const email = await confirmEmailChange(deps, request.query.token)
        return sendLocalMessage(reply, 200, 'Address changed', 'Your account’s address is now {email}.', {
          email,
        })
      } catch (err) {
        if (!(err instanceof AppError)) throw err
        return sendMessage(
          reply,
          err.status,
          'Address not changed',
          `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`,
        )
      }
    },
  )

  app.post(
    '/ui/account/key-backup',
    {
      ...signedIn,
      schema: {
        summary: 'Download the account’s did:key as a passphrase-encrypted JWE (receipted)',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          current_password: Type.Optional(Type.String({ maxLength: 1000 })),
          passphrase: Type.String({ maxLength: 1000 }),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      let backup: Awaited<ReturnType<typeof exportKeyBackup>>
      try {
        backup = await exportKeyBackup(deps, session, {
          passphrase: request.body.passphrase,
          ...(request.body.current_password ? { currentPassword: request.body.current_password } : {}),
          ip: request.ip,
        })
      } catch (err) {
        if (!(err instanceof AppError)) throw err
        const why = `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`
        return sendMessage(reply, err.status, 'Key not exported', why)
      }
      return reply
        .header('content-type', 'application/jose')
        .header('content-disposition', 'attachment; filename="did-key-backup.jwe"')
        .header('cache-control', 'no-store')
        .send(backup.jwe)
    },
  )

  app.post(
    '/ui/account/delete',
    {
      ...signedIn,
      schema: {
        summary: 'Delete the account: clients are told, everything but an anonymous row goes',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          confirm: Type.String({ maxLength: 100 }),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      if (request.body.confirm.trim().toLowerCase() !== CONFIRM_DELETE)
        return sendLocalMessage(reply, 400, 'Account not deleted', 'Type “{phrase}” to confirm', {
          phrase: CONFIRM_DELETE,
        })
      const outcome = await deleteAccount(deps, session.user_id, { ip: request.ip })
      await endSession(deps.db, request, reply)
      if (outcome === 'deferred')
        return sendLocalMessage(
          reply,
          200,
          'Account closed',
          'Your account is closed and signed out everywhere. A legal hold requires its data to be kept for now; it will be deleted as soon as the hold ends.',
        )
      return sendLocalMessage(
        reply,
        200,
        'Account deleted',
        'Your account is deleted. Thank you for having used it.',
      )
    },
  )
}
