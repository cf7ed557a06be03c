import { type App, AppError, html } from '@svc/kit'
import { Type } from 'typebox'
import { checkCsrf } from '../sessions/csrf.ts'
import { currentSession, endSession } from '../sessions/service.ts'
import { sendMessage } from '../ui/layout.ts'
import {
  type ChangeDeps,
  changePassword,
  checkCurrentPassword,
  confirmEmailChange,
  deleteAccount,
  requestEmailChange,
} from './changes.ts'
import { MIN_PASSWORD } from './routes.ts'
import { userByEmail } from './store.ts'

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/
const CONFIRM_DELETE = 'delete my account'

/** The account page's forms for changing the password or the address, and for deleting the account. */
export const changeForms = (csrf: string) =>
  html`<h2>Password and address</h2>
    <form method="post" action="/ui/account/password">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="current_password">Current password</label>
      <input id="current_password" name="current_password" type="password" autocomplete="current-password" required />
      <label for="new_password">New password (at least ${MIN_PASSWORD} characters)</label>
      <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD}" />
      <button type="submit">Change password</button>
    </form>
    <form method="post" action="/ui/account/email">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="new_email">New email address</label>
      <input id="new_email" name="email" type="email" autocomplete="email" required />
      <button type="submit">Change address</button>
    </form>
    <h2>Delete your account</h2>
    <form method="post" action="/ui/account/delete">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label for="confirm">Type “${CONFIRM_DELETE}” to confirm</label>
      <input id="confirm" name="confirm" required />
      <button type="submit">Delete my account</button>
    </form>`

/** Changes the signed-in user makes to the account; each one tells the clients (lifecycle webhooks). */
export function accountChangeRoutes(app: App, deps: ChangeDeps & { origin: string }) {
  const tags = ['pages']
  const signedIn = async (request: Parameters<typeof currentSession>[1], csrf: string) => {
    checkCsrf(request, csrf, deps.origin)
    const session = await currentSession(deps.db, request)
    if (!session) throw new AppError(401, 'login_required', 'sign in to change your account')
    return session
  }

  app.post(
    '/ui/account/password',
    {
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
      const session = await signedIn(request, request.body.csrf)
      if (request.body.new_password.length < MIN_PASSWORD)
        return sendMessage(
          reply,
          400,
          'Password too short',
          `Choose a password of at least ${MIN_PASSWORD} characters.`,
        )
      try {
        await checkCurrentPassword(deps.db, session.user_id, request.body.current_password)
      } catch {
        return sendMessage(reply, 400, 'Password not changed', 'The current password is not right.')
      }
      await changePassword(deps, session.user_id, request.body.new_password, 'account', {
        ip: request.ip,
        keepSid: session.sid,
      })
      return sendMessage(
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
      schema: {
        summary: 'Change the address: a link goes to the new one, nothing changes until it is followed',
        tags,
        body: Type.Object({ csrf: Type.String({ maxLength: 100 }), email: Type.String({ maxLength: 320 }) }),
      },
    },
    async (request, reply) => {
      const session = await signedIn(request, request.body.csrf)
      const email = request.body.email.trim()
      if (!EMAIL.test(email))
        return sendMessage(reply, 400, 'Address not changed', 'Enter a valid email address.')
      // the same answer whether or not the address is taken: no account is revealed
      if (!(await userByEmail(deps.db, email))) await requestEmailChange(deps, session.user_id, email)
      return sendMessage(reply, 200, 'Check your inbox', `Follow the link sent to ${email} to confirm it.`)
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
        return sendMessage(reply, 200, 'Address changed', `Your account’s address is now ${email}.`)
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
    '/ui/account/delete',
    {
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
      const session = await signedIn(request, request.body.csrf)
      if (request.body.confirm.trim().toLowerCase() !== CONFIRM_DELETE)
        return sendMessage(reply, 400, 'Account not deleted', `Type “${CONFIRM_DELETE}” to confirm.`)
      await deleteAccount(deps, session.user_id, { ip: request.ip })
      await endSession(deps.db, request, reply)
      return sendMessage(
        reply,
        200,
        'Account deleted',
        'Your account is deleted. Thank you for having used it.',
      )
    },
  )
}
