import { html } from '@svc/kit'
import { when } from '../../pages/layout.ts'
import { type Lang, t } from '../../pages/i18n.ts'

export const PASSKEY_SCRIPT_PATH = '/ui/passkeys.js'

/** The sign-in page's passkey button: the browser asks for any passkey of this site. */
export const passkeySignInForm = (lang: Lang, csrf: string, returnTo: string, options: object) =>
  html`<form method="post" action="/ui/login/passkey" data-webauthn="get" data-options="${JSON.stringify(options)}">
    <input type="hidden" name="csrf" value="${csrf}" />
    <input type="hidden" name="return_to" value="${returnTo}" />
    <input type="hidden" name="credential" />
    <button type="submit">${t(lang, 'Sign in with a passkey')}</button>
    <p role="status"></p>
  </form>`

/** The account page's passkey section: the passkeys, a button to add one, and to remove each. */
export const passkeySection = (
  lang: Lang,
  csrf: string,
  options: object,
  passkeys: Array<{ id: string; created_at: Date; last_used_at: Date | null }>,
) =>
  html`<h3>${t(lang, 'Passkeys')}</h3>
    ${passkeys.map(
      (p) =>
        html`<form method="post" action="/ui/account/passkeys/delete">
          <input type="hidden" name="csrf" value="${csrf}" />
          <input type="hidden" name="id" value="${p.id}" />
          <p>
            ${t(lang, 'Passkey added')} ${when(lang, p.created_at)}, ${t(lang, 'last used')}
            ${p.last_used_at ? when(lang, p.last_used_at) : t(lang, 'never')}
            <button type="submit">${t(lang, 'Remove')}</button>
          </p>
        </form>`,
    )}
    <form method="post" action="/ui/account/passkeys" data-webauthn="create" data-options="${JSON.stringify(options)}">
      <input type="hidden" name="csrf" value="${csrf}" />
      <input type="hidden" name="credential" />
      <button type="submit">${t(lang, 'Add a passkey')}</button>
      <p role="status"></p>
    </form>`
