import { type App, html } from '@svc/kit'
import { Type } from 'typebox'
import { withParams } from '../../oauth/redirect.ts'
import { parseScope } from '../../oauth/scopes.ts'
import { csrfToken } from '../../pages/csrf.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { type Lang, langOf, type Phrase, t } from '../../pages/i18n.ts'
import { langField, localPage, sendLocalMessage } from '../../pages/layout.ts'
import { requestContext } from '../accounts/index.ts'
import type { ParService } from '../par/index.ts'
import type { Lifecycle } from '../lifecycle/index.ts'
import type { IdpReactions } from '../../reactions.ts'
import { type ConsentDeps, decideConsent, withdrawConsent } from './consent-service.ts'
import { ceilingText } from '../tasks/index.ts'
import { parseTask } from '../tasks/index.ts'
import { clientRow } from '../clients/index.ts'
import { consentOf } from './consent-store.ts'

export const DESCRIPTIONS: Record<string, Phrase> = {
  openid: 'Know who you are (always shared)',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Keep access while you are away',
  organization: 'See your role in its organization',
}

/** A scope as the person reads it: its description, or the scope itself when it has none. */
export const describeScope = (lang: Lang, scope: string) =>
  DESCRIPTIONS[scope] ? t(lang, DESCRIPTIONS[scope]) : scope

const duration = (lang: Lang, seconds: number) =>
  seconds >= 86_400
    ? t(lang, '{n} days', { n: Math.round(seconds / 86_400) })
    : seconds >= 3600
      ? t(lang, '{n} hours', { n: Math.round(seconds / 3600) })
      : t(lang, '{n} minutes', { n: Math.round(seconds / 60) })

interface ConsentOptions extends ConsentDeps {
  par: ParService
  lifecycle: Lifecycle
  reactions: IdpReactions
  issuer: string
  origin: string
  secureCookies: boolean
}

/** The authorization request a consent page is about: only one for a registered third-party client. */
async function requestOf({ db, par }: Pick<ConsentOptions, 'db' | 'par'>, returnTo: string | undefined) {
  if (!returnTo?.startsWith('/authorize?')) return undefined
  let params = new URLSearchParams(returnTo.slice('/authorize?'.length))
  if (params.has('request_uri')) {
    // a pushed request (RFC 9126): its parameters are the stored ones
    const pushed = await par.expand(db, {
      client_id: params.get('client_id') ?? undefined,
      request_uri: params.get('request_uri') ?? undefined,
    })
    if (!pushed) return undefined
    params = new URLSearchParams(pushed)
  }
  const client = await clientRow(db, params.get('client_id') ?? '')
  const redirectUri = params.get('redirect_uri') ?? ''
  if (!client || client.first_party || !client.redirect_uris.includes(redirectUri)) return undefined
  const task = parseTask(Object.fromEntries(params))
  return {
    client,
    redirectUri,
    params,
    scopes: parseScope(params.get('scope') ?? ''),
    task: typeof task === 'object' ? task : undefined,
  }
}

/** identity-provider.md, /authorize 3: the user approves per scope; openid is always present. */
export function consentRoutes(
  app: App,
  { db, receipts, accounts, par, lifecycle, reactions, issuer, origin, secureCookies }: ConsentOptions,
) {
  const tags = ['pages']
  const pages = pageHooks({ db, origin })

  app.get(
    '/ui/consent',
    {
      ...pages.signedIn(),
      schema: {
        summary: 'The consent page',
        tags,
        querystring: Type.Object({ return_to: Type.String({ maxLength: 4000 }) }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const asked = await requestOf({ db, par }, request.query.return_to)
      if (!asked) return sendLocalMessage(reply, 400, 'Consent', 'This consent request is not valid.')
      const csrf = csrfToken(request, reply, secureCookies)
      const granted = (await consentOf(db, session.user_id, asked.client.client_id)).granted
      const lang = langOf(request)
      const task = asked.task
      return reply.type('text/html; charset=utf-8').send(
        localPage(
          request,
          'Consent',
          html`<h1>${t(lang, '{client} asks to', { client: asked.client.client_name })}</h1>
            ${
              task
                ? html`<p>
                  ${t(lang, 'For one task:')} <strong>${task.purpose}</strong>,
                  ${t(lang, 'at most {n} uses, for {duration}', { n: task.maxUses, duration: duration(lang, task.ttlS) })}${
                    task.ceiling ? html`, ${t(lang, 'within')} ${ceilingText(task.ceiling)}` : ''
                  }.
                </p>`
                : ''
            }
            <form method="post" action="/ui/consent">
              <input type="hidden" name="csrf" value="${csrf}" />
              <input type="hidden" name="return_to" value="${request.query.return_to}" />
              ${langField(lang)}
              <div data-scopes>
                ${asked.scopes.map((scope) =>
                  scope === 'openid'
                    ? html`<p><label><input type="checkbox" checked disabled /> ${describeScope(lang, 'openid')}</label></p>`
                    : html`<p><label><input type="checkbox" name="scope" value="${scope}" ${granted.includes(scope) || !granted.length ? html`checked` : ''} /> ${describeScope(lang, scope)}</label></p>`,
                )}
              </div>
              <div class="svc-actions">
                <button type="submit" name="decision" value="approve" class="primary">${t(lang, 'Allow')}</button>
                <button type="submit" name="decision" value="deny">${t(lang, 'Deny')}</button>
              </div>
            </form>`,
        ),
      )
    },
  )

  app.post(
    '/ui/consent',
    {
      ...pages.formSigningIn(),
      schema: {
        summary: 'Approve or deny, scope by scope',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          return_to: Type.String({ maxLength: 4000 }),
          decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
          scope: Type.Optional(
            Type.Union([
              Type.String({ maxLength: 100 }),
              Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 }),
            ]),
          ),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const asked = await requestOf({ db, par }, request.body.return_to)
      if (!asked) return sendLocalMessage(reply, 400, 'Consent', 'This consent request is not valid.')
      if (request.body.decision === 'deny')
        return reply.redirect(
          withParams(asked.redirectUri, {
            error: 'access_denied',
            error_description: 'the user denied the request',
            state: asked.params.get('state') ?? undefined,
            iss: issuer,
          }),
          303,
        )
      const checked = [request.body.scope ?? []].flat().filter((s) => asked.scopes.includes(s))
      await decideConsent({ db, receipts, accounts }, session.user_id, asked.client, asked.scopes, checked)
      return reply.redirect(request.body.return_to, 303)
    },
  )

  app.post(
    '/ui/account/consents/withdraw',
    {
      ...pages.form('sign in to manage connected apps'),
      schema: {
        summary: 'Withdraw everything granted to a client: its consent and refresh tokens',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          client_id: Type.String({ minLength: 1, maxLength: 200 }),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      if (
        !(await withdrawConsent(
          { db, receipts, accounts, lifecycle, reactions },
          session.user_id,
          request.body.client_id,
          requestContext(request),
        ))
      )
        return sendLocalMessage(reply, 404, 'Connected apps', 'This app has no access to withdraw.')
      return reply.redirect('/ui/account', 303)
    },
  )
}
