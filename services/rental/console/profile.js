// @ts-check
// The member's own profile: display name, language and notification choices; the password and
// second factor are the identity provider's (its account page, linked).
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { Field } from './tenant-ui.js'
import { allowed, ErrorText, html, Loading, useLoad } from './ui.js'

const NOTIFICATIONS = [
  'task_completed',
  'approval_requested',
  'invoice_issued',
  'incident_opened',
  'weekly_summary',
]

export function Profile({ me, t }) {
  const profile = useLoad('/v1/users/me')
  const [name, setName] = useState('')
  const [locale, setLocale] = useState('')
  const [notify, setNotify] = useState({})
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const [saved, setSaved] = useState(false)
  // the form is shown once its fields hold the loaded profile: typed before that, they would be reset
  const [filledFrom, setFilledFrom] = useState(/** @type {unknown} */ (null))
  const loaded = profile.data
  useEffect(() => {
    if (!loaded) return
    setName(loaded.display_name ?? '')
    setLocale(loaded.locale ?? '')
    setNotify(loaded.notifications)
    setFilledFrom(loaded)
  }, [loaded])
  const p = loaded && filledFrom === loaded ? loaded : null
  const mayWrite = allowed(me, 'profile:write')
  const submit = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    setSaved(false)
    try {
      await api('PATCH', '/v1/users/me', {
        display_name: name.trim() === '' ? null : name.trim(),
        locale: locale === '' ? null : locale,
        notifications: Object.fromEntries(NOTIFICATIONS.map((n) => [n, notify[n] === true])),
      })
      setSaved(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return html`<h1>${t('profile.title')}</h1>
    <${ErrorText} error=${profile.error} t=${t} />
    ${
      !p
        ? profile.error && !loaded
          ? null
          : html`<${Loading} t=${t} />`
        : html`<form class="card" data-testid="profile" onSubmit=${submit}>
            <p><bdi>${p.email ?? me.client.email ?? ''}</bdi></p>
            <${Field} id="display-name" label=${t('profile.display_name')} value=${name} onInput=${setName}
              autocomplete="name" />
            <p class="field"><label for="profile-locale">${t('profile.locale')}</label>
              <select id="profile-locale" value=${locale} onChange=${(e) => setLocale(e.currentTarget.value)}>
                <option value="">—</option><option value="en">English</option><option value="ar">العربية</option>
              </select></p>
            <fieldset><legend>${t('profile.notifications')}</legend>
              ${NOTIFICATIONS.map(
                (n) => html`<label key=${n} class="check"><input type="checkbox" checked=${notify[n] === true}
                  onChange=${(e) => setNotify({ ...notify, [n]: e.currentTarget.checked })} /> ${t(`notify.${n}`)}</label>`,
              )}
            </fieldset>
            ${
              mayWrite
                ? html`<button type="submit" disabled=${busy}>${busy ? t('roles.saving') : t('profile.save')}</button>`
                : null
            }
            <${ErrorText} error=${error} t=${t} />
            ${saved ? html`<p class="ok" role="status">${t('profile.saved')}</p>` : null}
          </form>
          <section class="card" aria-labelledby="security-title">
            <h2 id="security-title">${t('profile.security')}</h2>
            <p>${t('profile.security_hint')} <a href=${p.account_url} rel="noopener" data-testid="account-link">${t('profile.account')}</a></p>
          </section>`
    }`
}
