import type { App } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { Type } from 'typebox'
import { recordEvent, requestContext } from '../accounts/index.ts'
import { removePassword, userById } from '../accounts/index.ts'
import { CsrfOnly, checkCsrf } from '../../pages/csrf.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { safeReturnTo, sendLocalMessage } from '../../pages/layout.ts'
import { completeSignIn } from '../accounts/index.ts'
import { PASSKEY_SCRIPT_PATH } from './pages.ts'
import { PASSKEY_SCRIPT } from './script.ts'
import { addPasskey, type RelyingParty, signInWithPasskey } from './service.ts'
import { deletePasskey, hasPasskey, passkeysOf } from './store.ts'
import { idpError } from '../../errors.ts'

interface PasskeyOptions extends RelyingParty {
  receipts: ReceiptWriter
  secureCookies: boolean
}

const Credential = Type.String({ minLength: 2, maxLength: 20_000 })

/** The browser's WebAuthn JSON, or a 400: the form field is whatever the page posted. */
function parseCredential<T>(value: string): T {
  try {
    const parsed = JSON.parse(value) as unknown
    if (parsed && typeof parsed === 'object' && typeof (parsed as { id?: unknown }).id === 'string')
      return parsed as T
  } catch {
    // answered below
  }
  throw idpError('invalid_request', 'credential must be the JSON of a WebAuthn credential')
}

/** Passkeys (WebAuthn Level 3): sign-in, adding and removing them, and removing the password. */
export function passkeyRoutes(app: App, options: PasskeyOptions) {
  const { db, receipts, origin, secureCookies } = options
  const tags = ['pages']
  const pages = pageHooks(options)

  app.get(
    PASSKEY_SCRIPT_PATH,
    { schema: { summary: 'The passkey script of the hosted pages', tags } },
    (_, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(PASSKEY_SCRIPT),
  )

  app.post(
    '/ui/login/passkey',
    {
      schema: {
        summary: 'Sign in with a passkey',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          return_to: Type.Optional(Type.String({ maxLength: 4000 })),
          credential: Credential,
        }),
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const userId = await signInWithPasskey(options, parseCredential(request.body.credential)).catch(
        () => undefined,
      )
      if (!userId)
        return sendLocalMessage(
          reply,
          401,
          'Sign in',
          'This passkey was not accepted. Go back and try again.',
        )
      // user verification was required: the passkey is possession and a PIN or biometric at once
      return completeSignIn({ db, receipts }, request, reply, {
        userId,
        amr: ['webauthn'],
        acr: 'urn:svc:mfa',
        returnTo: safeReturnTo(request.body.return_to),
        secure: secureCookies,
      })
    },
  )

  app.post(
    '/ui/account/passkeys',
    {
      ...pages.form('sign in to add a passkey'),
      schema: {
        summary: 'Add a passkey to the signed-in account',
        tags,
        body: Type.Object({ csrf: Type.String({ maxLength: 100 }), credential: Credential }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const added = await addPasskey(
        options,
        session.user_id,
        parseCredential(request.body.credential),
      ).catch(() => false)
      if (!added)
        return sendLocalMessage(reply, 400, 'Passkeys', 'This passkey could not be added. Try again.')
      await recordEvent(db, session.user_id, 'passkey_added', requestContext(request))
      return reply.redirect('/ui/account', 303)
    },
  )

  app.post(
    '/ui/account/passkeys/delete',
    {
      ...pages.form('sign in to remove a passkey'),
      schema: {
        summary: 'Remove a passkey from the signed-in account',
        tags,
        body: Type.Object({ csrf: Type.String({ maxLength: 100 }), id: Type.String({ maxLength: 1400 }) }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const user = await userById(db, session.user_id)
      const passkeys = await passkeysOf(db, session.user_id)
      if (!passkeys.some((p) => p.id === request.body.id))
        return sendLocalMessage(reply, 404, 'Passkeys', 'There is no such passkey.')
      // never the last way in
      if (!user?.password_hash && passkeys.length === 1)
        return sendLocalMessage(
          reply,
          409,
          'Passkeys',
          'This is your only way to sign in: set a password first.',
        )
      await deletePasskey(db, session.user_id, request.body.id)
      await recordEvent(db, session.user_id, 'passkey_removed', requestContext(request))
      return reply.redirect('/ui/account', 303)
    },
  )

  app.post(
    '/ui/account/password/remove',
    {
      ...pages.form('sign in to remove your password'),
      schema: {
        summary: 'Remove the password: only from a session signed in with a passkey',
        tags,
        body: CsrfOnly,
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      if (!session.amr.includes('webauthn') || !(await hasPasskey(db, session.user_id)))
        return sendLocalMessage(
          reply,
          403,
          'Password',
          'Sign in with a passkey to remove your password: it proves you can sign in without it.',
        )
      await removePassword(db, session.user_id)
      await recordEvent(db, session.user_id, 'password_removed', requestContext(request))
      return reply.redirect('/ui/account', 303)
    },
  )
}
