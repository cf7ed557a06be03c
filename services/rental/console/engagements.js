// Engagements: the list, and one engagement: its terms, escrows, the signing of a pending one
// (in this browser, with its key, showing what is signed) and a new task on an active one.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { EngagementMore } from './engagement-detail.js'
import { canonicalOf, currentKey, signBody } from './keys.js'
import { Pager, usePaged } from './paging.js'
import { ActionButton, Did, Empty, ErrorText, Fils, html, Loading, useLoad, When } from './ui.js'

export function Engagements({ t, lang }) {
  const list = usePaged('/api/engagements', { field: 'engagements' })
  return html`<h1>${t('eng.title')}</h1>
    <${ErrorText} error=${list.error} t=${t} />
    ${
      !list.data
        ? html`<${Loading} t=${t} />`
        : list.data.engagements.length === 0
          ? html`<${Empty}>${t('eng.empty')} <a href="#/market">${t('nav.market')}</a><//>`
          : html`<table class="list">
            <thead><tr><th>${t('eng.job')}</th><th>${t('eng.state')}</th><th>${t('eng.price')}</th><th>${t('eng.created')}</th></tr></thead>
            <tbody>${list.data.engagements.map(
              (e) => html`<tr key=${e.id}>
                <td><a href=${`#/engagements/${e.id}`}>${e.job_id}</a></td>
                <td>${t(`eng.state.${e.state}`)}</td>
                <td><${Fils} fils=${e.price_fils} currency=${e.currency} lang=${lang} /></td>
                <td><${When} iso=${e.created_at} lang=${lang} /></td>
              </tr>`,
            )}</tbody>
          </table>
          <${Pager} page=${list.page} t=${t} lang=${lang} />`
    }`
}

/** A signed body as a person reads it: its fields, then its canonical bytes and their SHA-256. */
export function Signable({ title, signed, t, lang }) {
  const [canon, setCanon] = useState(null)
  useEffect(() => {
    void canonicalOf(signed.body).then(setCanon)
  }, [signed.hash])
  const matches = canon && `sha256:${canon.sha256}` === signed.hash
  return html`<section class="signable">
    <h3>${title}</h3>
    <dl class="terms">${Object.entries(signed.body).map(
      ([name, value]) => html`<dt key=${name}>${name}</dt>
        <dd dir="ltr">${typeof value === 'object' ? JSON.stringify(value) : String(value)}${
          name.endsWith('_fils') && Number.isSafeInteger(value)
            ? html` (<${Fils} fils=${value} currency=${signed.body.currency ?? 'AED'} lang=${lang} />)`
            : null
        }</dd>`,
    )}</dl>
    <details><summary>${t('sign.bytes')}</summary><pre dir="ltr" class="jcs">${canon?.text}</pre></details>
    <p>${t('sign.hash')}: <code dir="ltr" class="hash">${canon ? `sha256:${canon.sha256}` : '…'}</code>
      ${
        canon && signed.hash
          ? matches
            ? html` <span class="ok">✓ ${t('sign.hash_ok')}</span>`
            : html` <span class="error" role="alert">${t('sign.hash_bad', { hash: signed.hash })}</span>`
          : null
      }</p>
  </section>`
}

function SignPanel({ detail, t, lang, onSigned }) {
  const [key, setKey] = useState(undefined)
  useEffect(() => {
    void currentKey().then(setKey, () => setKey(null))
  }, [])
  const { engagement, package: pkg } = detail
  const offered = engagement.escrows.filter((e) => e.state === 'offered')
  const escrows = pkg.escrows.filter((s) => offered.some((e) => e.hash === s.hash))
  const sign = async () => {
    const sla_signature = await signBody(key, pkg.sla.body)
    const escrow_signatures = []
    for (const e of escrows)
      escrow_signatures.push({ escrow_hash: e.hash, signature: await signBody(key, e.body) })
    onSigned(
      await api('POST', `/api/engagements/${engagement.id}/signatures`, { sla_signature, escrow_signatures }),
    )
  }
  return html`<section class="card sign" aria-labelledby="sign-title">
    <h2 id="sign-title">${t('sign.title')}</h2>
    <p>${t('sign.intro')}</p>
    <${Signable} title=${t('sign.sla')} signed=${pkg.sla} t=${t} lang=${lang} />
    ${escrows.map((e, i) => html`<${Signable} key=${e.hash} title=${t('sign.escrow', { n: i + 1 })} signed=${e} t=${t} lang=${lang} />`)}
    ${
      key === undefined
        ? html`<${Loading} t=${t} />`
        : key?.did !== engagement.client_did
          ? html`<p class="warning" role="alert">${t('sign.other_key', { did: engagement.client_did, mine: key?.did ?? '—' })}</p>`
          : html`<${ActionButton} kind="primary" label=${t('sign.button')} busy=${t('sign.signing')} t=${t} action=${sign} />`
    }
  </section>`
}

function NewTask({ engagement, t }) {
  const [text, setText] = useState('')
  const fields = useFieldProblems()
  const run = async () => {
    fields.check({ 'task-text': text.trim() ? null : t('field.task_text') })
    const created = await api('POST', '/api/tasks', { engagement_id: engagement.id, text, async: true })
    location.hash = `#/tasks/${created.task.id}`
  }
  return html`<section class="card" aria-labelledby="new-task">
    <h2 id="new-task">${t('task.new')}</h2>
    <label for="task-text">${t('task.text')}</label>
    <textarea id="task-text" dir="auto" rows="5" maxlength="20000" required value=${text} ...${fields.at('task-text')}
      onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    ${fields.note('task-text')}
    <${ActionButton} kind="primary" label=${t('task.run')} busy=${t('task.running')} t=${t} action=${run} />
  </section>`
}

export function Engagement({ id, t, lang }) {
  const loaded = useLoad(`/api/engagements/${encodeURIComponent(id)}`)
  const [detail, setDetail] = useState(null)
  useEffect(() => setDetail(loaded.data), [loaded.data])
  if (loaded.error && !detail)
    return html`<h1>${t('nav.engagements')}</h1><${ErrorText} error=${loaded.error} t=${t} />
      <p><a href="#/engagements">${t('nav.engagements')}</a></p>`
  if (!detail) return html`<${Loading} t=${t} />`
  const e = detail.engagement
  return html`<p><a href="#/engagements"><span class="back-arrow" aria-hidden="true">←</span> ${t('eng.title')}</a></p>
    <h1>${e.job_id}</h1>
    <section class="card">
      <dl>
        <dt>${t('eng.state')}</dt><dd data-testid="engagement-state">${t(`eng.state.${e.state}`)}</dd>
        <dt>${t('eng.agent')}</dt><dd><${Did} did=${e.agent_did} /></dd>
        <dt>${t('eng.client_key')}</dt><dd><${Did} did=${e.client_did} /></dd>
        <dt>${t('eng.price')}</dt><dd><${Fils} fils=${e.price_fils} currency=${e.currency} lang=${lang} /> ${t('market.per_task')}</dd>
        <dt>${t('eng.created')}</dt><dd><${When} iso=${e.created_at} lang=${lang} /></dd>
      </dl>
      <h2>${t('eng.escrows')}</h2>
      <ul>${e.escrows.map(
        (
          x,
        ) => html`<li key=${x.id}><${Fils} fils=${x.amount_fils} currency=${x.currency} lang=${lang} /> · ${t(`escrow.${x.state}`)}
          ${x.task_id ? html` · <a href=${`#/tasks/${x.task_id}`}>${x.task_id}</a>` : null}</li>`,
      )}</ul>
    </section>
    ${
      e.state === 'pending'
        ? html`<${SignPanel} detail=${detail} t=${t} lang=${lang} onSigned=${setDetail} />`
        : e.state === 'active'
          ? html`<${NewTask} engagement=${e} t=${t} />`
          : null
    }
    <${EngagementMore} detail=${detail} t=${t} lang=${lang} onChange=${() => void loaded.reload()} />`
}
