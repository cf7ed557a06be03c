import { html } from '@svc/kit'

export const PASSKEY_SCRIPT_PATH = '/ui/passkeys.js'

/** The sign-in page's passkey button: the browser asks for any passkey of this site. */
export const passkeySignInForm = (csrf: string, returnTo: string, options: object) =>
  html`<form method="post" action="/ui/login/passkey" data-webauthn="get" data-options="${JSON.stringify(options)}">
    <input type="hidden" name="csrf" value="${csrf}" />
    <input type="hidden" name="return_to" value="${returnTo}" />
    <input type="hidden" name="credential" />
    <button type="submit">Sign in with a passkey</button>
    <p role="status"></p>
  </form>`

/** The account page's passkey section: the passkeys, a button to add one, and to remove each. */
export const passkeySection = (
  csrf: string,
  options: object,
  passkeys: Array<{ id: string; created_at: Date; last_used_at: Date | null }>,
) =>
  html`<h2>Passkeys</h2>
    ${passkeys.map(
      (p) =>
        html`<form method="post" action="/ui/account/passkeys/delete">
          <input type="hidden" name="csrf" value="${csrf}" />
          <input type="hidden" name="id" value="${p.id}" />
          <p>
            Passkey added ${p.created_at.toISOString()}, last used ${p.last_used_at?.toISOString() ?? 'never'}
            <button type="submit">Remove</button>
          </p>
        </form>`,
    )}
    <form method="post" action="/ui/account/passkeys" data-webauthn="create" data-options="${JSON.stringify(options)}">
      <input type="hidden" name="csrf" value="${csrf}" />
      <input type="hidden" name="credential" />
      <button type="submit">Add a passkey</button>
      <p role="status"></p>
    </form>`
