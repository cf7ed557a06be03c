// The browser's signing key on screen: its did:key and whether it has a backup; making one with a
// backup (recommended) or without; restoring one from a backup file.
import { useEffect, useState } from 'preact/hooks'
import { makeKeyWithBackup, MIN_PASSPHRASE, restoreKey } from './key-backup.js'
import { currentKey, ensureKey, supported } from './keys.js'
import { ActionButton, Did, html, Loading, When } from './ui.js'

/** A local failure in words: the key module throws codes (`passphrase_short`, `backup_invalid`, …). */
const KeyError = ({ error, t }) =>
  error ? html`<p class="error" role="alert">${t(`key.error.${error.message}`)}</p>` : null

function MakeWithBackup({ t, onMade }) {
  const [pass, setPass] = useState('')
  const [again, setAgain] = useState('')
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    if (pass !== again) return setError(new Error('passphrase_mismatch'))
    setBusy(true)
    try {
      onMade(await makeKeyWithBackup(pass))
    } catch (err) {
      setError(err.message?.startsWith('passphrase_') ? err : new Error('unsupported'))
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="stack" onSubmit=${submit} data-testid="key-backup-form">
    <p>${t('key.backup_intro', { n: MIN_PASSPHRASE })}</p>
    <label for="key-pass">${t('key.passphrase')}</label>
    <input id="key-pass" type="password" autocomplete="new-password" minlength=${MIN_PASSPHRASE} required
      value=${pass} onInput=${(e) => setPass(e.currentTarget.value)} />
    <label for="key-pass-again">${t('key.passphrase_again')}</label>
    <input id="key-pass-again" type="password" autocomplete="new-password" required
      value=${again} onInput=${(e) => setAgain(e.currentTarget.value)} />
    <button type="submit" disabled=${busy}>${busy ? t('loading') : t('key.make_backed_up')}</button>
    <${KeyError} error=${error} t=${t} />
  </form>`
}

function Restore({ t, onRestored, replacing }) {
  const [file, setFile] = useState(null)
  const [pass, setPass] = useState('')
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    if (!file) return setError(new Error('backup_missing'))
    setBusy(true)
    try {
      onRestored(await restoreKey(await file.text(), pass))
    } catch (err) {
      setError(err.message?.startsWith('backup_') ? err : new Error('backup_invalid'))
    } finally {
      setBusy(false)
    }
  }
  return html`<details class="restore"><summary>${t('key.restore')}</summary>
    <form class="stack" onSubmit=${submit} data-testid="key-restore-form">
      ${replacing ? html`<p class="warning">${t('key.restore_replaces')}</p>` : null}
      <label for="key-file">${t('key.backup_file')}</label>
      <input id="key-file" type="file" accept="application/json,.json" required
        onChange=${(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
      <label for="key-restore-pass">${t('key.passphrase')}</label>
      <input id="key-restore-pass" type="password" autocomplete="current-password" required
        value=${pass} onInput=${(e) => setPass(e.currentTarget.value)} />
      <button type="submit" disabled=${busy}>${busy ? t('loading') : t('key.restore_button')}</button>
      <${KeyError} error=${error} t=${t} />
    </form>
  </details>`
}

/** The browser's signing key: its did:key and backup, or how to make or restore one, or why this browser cannot. */
export function KeyPanel({ t, lang }) {
  const [key, setKey] = useState(undefined)
  const [ok, setOk] = useState(true)
  const [download, setDownload] = useState(null)
  const load = async () => setKey(await currentKey())
  useEffect(() => {
    void supported().then(async (yes) => {
      setOk(yes)
      if (yes) await load()
      else setKey(null)
    })
  }, [])
  const made = async (result) => {
    setDownload(result)
    await load()
  }
  return html`<section class="card" aria-labelledby="key-title" data-testid="key-panel">
    <h2 id="key-title">${t('key.title')}</h2>
    ${
      !ok
        ? html`<p class="warning" role="alert">${t('key.unsupported')}</p>`
        : key === undefined
          ? html`<${Loading} t=${t} />`
          : key
            ? html`<p><${Did} did=${key.did} /></p>
              ${
                key.backedUpAt
                  ? html`<p class="ok" data-testid="key-backed-up">${t('key.backed_up')} <${When} iso=${key.backedUpAt} lang=${lang} /></p>`
                  : html`<p class="warning" role="alert" data-testid="key-no-backup">${t('key.no_backup')}</p>`
              }
              ${
                download
                  ? html`<p class="ok" role="status">${t('key.backup_ready')}${' '}
                    <a href=${download.url} download=${download.file} data-testid="key-backup-download">${t('key.backup_download')}</a></p>`
                  : null
              }`
            : html`<p>${t('key.none')}</p>
              <${MakeWithBackup} t=${t} onMade=${made} />
              <p>${t('key.without_backup')}</p>
              <${ActionButton} label=${t('key.make')} busy=${t('loading')} t=${t}
                action=${async () => setKey(await ensureKey())} />`
    }
    ${ok && key !== undefined ? html`<${Restore} t=${t} replacing=${Boolean(key)} onRestored=${load} />` : null}
    <p class="hint">${t('key.where')}</p>
  </section>`
}
