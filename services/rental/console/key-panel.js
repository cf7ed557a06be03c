// @ts-check
// The browser's signing key on screen: its did:key and whether it has a backup; making one with a
// backup (recommended) or without; restoring one from a backup file.
import { useEffect, useState } from 'preact/hooks'
import { makeKeyWithBackup, markBackedUp, MIN_PASSPHRASE, restoreKey, saveBackup } from './key-backup.js'
import { useFieldProblems } from './field-check.js'
import { currentKey, ensureKey, supported } from './keys.js'
import { CopyId } from './names.js'
import { ActionButton, html, Loading, When } from './ui.js'
import { separator } from './i18n.js'

/** A local failure in words: the key module throws codes (`passphrase_short`, `backup_invalid`, …). */
const KeyError = ({ error, t }) =>
  error ? html`<p class="error" role="alert">${t(`key.error.${error.message}`)}</p>` : null

function MakeWithBackup({ t, onMade }) {
  const [pass, setPass] = useState('')
  const [again, setAgain] = useState('')
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const [busy, setBusy] = useState(false)
  const fields = useFieldProblems()
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    try {
      fields.check({
        'key-pass': pass.length < MIN_PASSPHRASE ? t('key.error.passphrase_short') : null,
        'key-pass-again': pass !== again ? t('key.error.passphrase_mismatch') : null,
      })
    } catch {
      return
    }
    setBusy(true)
    try {
      onMade(await makeKeyWithBackup(pass))
    } catch (err) {
      setError(err.message?.startsWith('passphrase_') ? err : new Error('unsupported'))
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="stack" onSubmit=${submit} data-testid="key-backup-form" novalidate>
    <p>${t('key.backup_intro', { n: MIN_PASSPHRASE })}</p>
    <label for="key-pass">${t('key.passphrase')}</label>
    <input id="key-pass" type="password" autocomplete="new-password" minlength=${MIN_PASSPHRASE} required
      value=${pass} onInput=${(e) => setPass(e.currentTarget.value)} ...${fields.at('key-pass')} />
    ${fields.note('key-pass')}
    <label for="key-pass-again">${t('key.passphrase_again')}</label>
    <input id="key-pass-again" type="password" autocomplete="new-password" required
      value=${again} onInput=${(e) => setAgain(e.currentTarget.value)} ...${fields.at('key-pass-again')} />
    ${fields.note('key-pass-again')}
    <button type="submit" disabled=${busy}>${busy ? t('loading') : t('key.make_backed_up')}</button>
    <${KeyError} error=${error} t=${t} />
  </form>`
}

function Restore({ t, onRestored, replacing }) {
  const fields = useFieldProblems()
  const [file, setFile] = useState(/** @type {File | null} */ (null))
  const [pass, setPass] = useState('')
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const [busy, setBusy] = useState(false)
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    try {
      fields.check({
        'key-file': file ? null : t('key.error.backup_missing'),
        'key-restore-pass': pass ? null : t('field.required'),
      })
    } catch {
      return
    }
    setBusy(true)
    try {
      onRestored(await restoreKey(await /** @type {File} */ (file).text(), pass))
    } catch (err) {
      setError(err.message?.startsWith('backup_') ? err : new Error('backup_invalid'))
    } finally {
      setBusy(false)
    }
  }
  return html`<details class="restore"><summary>${t('key.restore')}</summary>
    <form class="stack" onSubmit=${submit} data-testid="key-restore-form" novalidate>
      ${replacing ? html`<p class="warning">${t('key.restore_replaces')}</p>` : null}
      <label for="key-file">${t('key.backup_file')}</label>
      <input id="key-file" type="file" accept="application/json,.json" required
        onChange=${(e) => setFile(e.currentTarget.files?.[0] ?? null)} ...${fields.at('key-file')} />
      ${fields.note('key-file')}
      <label for="key-restore-pass">${t('key.passphrase')}</label>
      <input id="key-restore-pass" type="password" autocomplete="current-password" required
        value=${pass} onInput=${(e) => setPass(e.currentTarget.value)} ...${fields.at('key-restore-pass')} />
      ${fields.note('key-restore-pass')}
      <button type="submit" disabled=${busy}>${busy ? t('loading') : t('key.restore_button')}</button>
      <${KeyError} error=${error} t=${t} />
    </form>
  </details>`
}

/**
 * The backup just made, until its file is saved: save it (the browser's dialog, or a download the
 * person confirms), and when the save was cancelled or did not land, say plainly that the key
 * exists only in this browser and offer it again.
 */
function SaveBackup({ made, t, onSaved }) {
  const [status, setStatus] = useState('unsaved')
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const save = async () => {
    setError(null)
    try {
      const result = await saveBackup(made)
      setStatus(result)
      if (result === 'saved') onSaved()
    } catch {
      setError(new Error('unsupported'))
    }
  }
  const confirmed = async () => {
    await markBackedUp()
    onSaved()
  }
  return html`<div class="backup-save" data-testid="key-backup-save-panel" data-status=${status}>
    ${
      status === 'cancelled'
        ? html`<p class="warning" role="alert" data-testid="key-backup-cancelled">${t('key.backup_cancelled')}</p>`
        : html`<p class="warning" role="status" data-testid="key-backup-unsaved">${t('key.backup_unsaved')}</p>`
    }
    ${
      status === 'asking'
        ? html`<p>${t('key.backup_confirm', { file: made.file })}</p>
          <div class="actions">
            <button type="button" class="primary" data-testid="key-backup-saved" onClick=${confirmed}>${t('key.backup_saved_yes')}</button>
            <button type="button" onClick=${() => setStatus('cancelled')}>${t('key.backup_saved_no')}</button>
          </div>`
        : html`<button type="button" class="primary" data-testid="key-backup-save" onClick=${save}>${t('key.backup_save')}</button>`
    }
    <${KeyError} error=${error} t=${t} />
  </div>`
}

/** The browser's signing key: its did:key and backup, or how to make or restore one, or why this browser cannot. */
export function KeyPanel({ t, lang }) {
  const [key, setKey] = useState(
    /** @type {Awaited<ReturnType<typeof currentKey>> | undefined} */ (undefined),
  )
  const [ok, setOk] = useState(true)
  const [made, setMade] = useState(/** @type {any} */ (null))
  const load = async () => setKey(await currentKey())
  useEffect(() => {
    void supported().then(async (yes) => {
      setOk(yes)
      if (yes) await load()
      else setKey(null)
    })
  }, [])
  const onMade = async (result) => {
    setMade(result)
    await load()
  }
  const saved = async () => {
    setMade(null)
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
            ? html`<p><${CopyId} label=${t('eng.client_did')} value=${key.did} t=${t} /></p>
              ${
                key.backedUpAt
                  ? html`<p class="ok" data-testid="key-backed-up">${t('key.backed_up_at')}${separator(lang)}<${When} iso=${key.backedUpAt} lang=${lang} /></p>`
                  : made?.did === key.did
                    ? html`<${SaveBackup} made=${made} t=${t} onSaved=${saved} />`
                    : html`<p class="warning" role="alert" data-testid="key-no-backup">${t('key.no_backup')}</p>`
              }`
            : html`<p>${t('key.none')}</p>
              <${MakeWithBackup} t=${t} onMade=${onMade} />
              <p>${t('key.without_backup')}</p>
              <${ActionButton} label=${t('key.make')} busy=${t('loading')} t=${t}
                action=${async () => setKey(await ensureKey())} />`
    }
    ${ok && key !== undefined ? html`<${Restore} t=${t} replacing=${Boolean(key)} onRestored=${load} />` : null}
    <p class="hint">${t('key.where')}</p>
  </section>`
}
