/**
 * The hosted pages' passkey script (served at /ui/passkeys.js): a form marked `data-webauthn`
 * carries the options in `data-options`; on submit the browser's WebAuthn ceremony runs and its
 * JSON result (WebAuthn Level 3 toJSON) is posted in the form's `credential` field.
 */
export const PASSKEY_SCRIPT = `'use strict'
for (const form of document.querySelectorAll('form[data-webauthn]')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const status = form.querySelector('[role=status]')
    if (!window.PublicKeyCredential || !PublicKeyCredential.parseRequestOptionsFromJSON) {
      status.textContent = 'This browser cannot use passkeys.'
      return
    }
    try {
      const options = JSON.parse(form.dataset.options)
      const credential =
        form.dataset.webauthn === 'create'
          ? await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })
          : await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) })
      form.elements.credential.value = JSON.stringify(credential.toJSON())
      form.submit()
    } catch (err) {
      status.textContent = 'The passkey was not used: ' + err.message
    }
  })
}
`
