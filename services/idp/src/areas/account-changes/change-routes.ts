import { type App, AppError, html, type Sealer } from '@svc/kit'
import { Type } from 'typebox'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { endSession } from '../sessions/index.ts'
import { type Lang, t } from '../../pages/i18n.ts'
import { field, type Onward, sendLocalMessage, sendMessage } from '../../pages/layout.ts'
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
/** After the account is gone, the only way on is the sign-in page. */
const TO_SIGN_IN: Onward[] = [{ href: '/ui/login', text: 'Back to sign in' }]

/** The account page's form for a new password (the current one first). */
export const passwordForm = (lang: Lang, csrf: string) =>
  html`<details class="svc-disclosure">
    <summary>${t(lang, 'Change password')}</summary>
    <form method="post" action="/ui/account/password">
    <input type="hidden" name="csrf" value="${csrf}" />
    ${field(lang, { id: 'current_password', label: 'Current password', type: 'password', autocomplete: 'current-password', required: true })}
    ${field(lang, { id: 'new_password', label: 'New password (at least {n} characters)', labelVars: { n: MIN_PASSWORD }, type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD })}
    <button type="submit" class="primary">${t(lang, 'Change password')}</button>
  </form>
  </details>`

/** The account page's form for a new address (a link goes to it first). */
export const emailForm = (lang: Lang, csrf: string) =>
  html`<details class="svc-disclosure">
    <summary>${t(lang, 'Change address')}</summary>
    <form method="post" action="/ui/account/email">
    <input type="hidden" name="csrf" value="${csrf}" />
    ${field(lang, { id: 'new_email', name: 'email', label: 'New email address', type: 'email', autocomplete: 'email', required: true })}
    <button type="submit" class="primary">${t(lang, 'Change address')}</button>
  </form>
  </details>`

/** The account page's key backup: the account's key, encrypted with a passphrase the person chooses. */
export const keyBackupForm = (lang: Lang, csrf: string) =>
  html`<h3>${t(lang, 'Back up your key')}</h3>
    <p class="svc-hint">
      ${t(
        lang,
        'Download your account’s signing key, encrypted with a passphrase you choose. Keep the passphrase apart from the file: without it the file cannot be opened.',
      )}
    </p>
    <details class="svc-disclosure">
    <summary>${t(lang, 'Back up your key')}</summary>
    <form method="post" action="/ui/account/key-backup">
      <input type="hidden" name="csrf" value="${csrf}" />
      ${field(lang, { id: 'backup_password', name: 'current_password', label: 'Current password (if your account has one)', type: 'password', autocomplete: 'current-password' })}
      ${field(lang, { id: 'passphrase', label: 'Passphrase for the backup (at least {n} characters)', labelVars: { n: MIN_PASSPHRASE }, type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSPHRASE })}
      <button type="submit" class="primary">${t(lang, 'Download the backup')}</button>
    </form>
    </details>`

/** The account page's last form: deleting the account, confirmed by typing a phrase. */
export const deleteForm = (lang: Lang, csrf: string) =>
  html`<p>${t(lang, 'Deleting your account signs you out everywhere and tells the apps you use. It cannot be undone.')}</p>
    <form method="post" action="/ui/account/delete">
      <input type="hidden" name="csrf" value="${csrf}" />
      ${field(lang, { id: 'confirm', label: 'Type “{phrase}” to confirm', labelVars: { phrase: CONFIRM_DELETE }, required: true, autocomplete: 'off' })}
      <button type="submit" class="danger">${t(lang, 'Delete my account')}</button>
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
          {},
          TO_SIGN_IN,
        )
      return sendLocalMessage(
        reply,
        200,
        'Account deleted',
        'Your account is deleted. Thank you for having used it.',
        {},
        TO_SIGN_IN,
      )
    },
  )
}
