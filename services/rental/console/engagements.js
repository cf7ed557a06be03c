// @ts-check
// Engagements: the list, and one engagement: its terms, escrows, the signing of a pending one
// (in this browser, with its key, showing what is signed) and a new task on an active one.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { EngagementMore } from './engagement-detail.js'
import { canonicalOf, currentKey, signBody } from './keys.js'
import { CopyId, OtherKey, summaryOf } from './names.js'
import { formatDate, separator } from './i18n.js'
import { Pager, usePaged } from './paging.js'
import { ActionButton, Empty, ErrorText, Fils, html, Loading, useLoad, When } from './ui.js'

export function Engagements({ t, lang }) {
  const list = usePaged(`/api/engagements?lang=${lang}`, { field: 'engagements' })
  return html`<h1>${t('eng.title')}</h1>
    <${ErrorText} error=${list.error} t=${t} />
    ${
      !list.data
        ? html`<${Loading} t=${t} />`
        : list.data.engagements.length === 0
          ? html`<${Empty}>${t('eng.empty')} <a href="#/market">${t('nav.market')}</a><//>`
          : html`<table class="list">
            <thead><tr><th>${t('eng.job')}</th><th>${t('eng.agent')}</th><th>${t('eng.state')}</th><th>${t('eng.price')}</th><th>${t('eng.created')}</th></tr></thead>
            <tbody>${list.data.engagements.map(
              (e) => html`<tr key=${e.id} data-engagement=${e.id}>
                <td><a href=${`#/engagements/${e.id}`}>${e.job_title ?? e.job_id}</a></td>
                <td>${e.agent_name ?? t('sign.the_agent')}</td>
                <td>${t(`eng.state.${e.state}`)}</td>
                <td><${Fils} fils=${e.price_fils} currency=${e.currency} lang=${lang} /></td>
                <td><${When} iso=${e.created_at} lang=${lang} /></td>
              </tr>`,
            )}</tbody>
          </table>
          <${Pager} page=${list.page} t=${t} lang=${lang} />`
    }`
}

/** A field's value as signed, and for amounts and times the same in the person's words. */
function FieldValue({ name, value, currency, lang }) {
  const exact = typeof value === 'object' ? JSON.stringify(value) : String(value)
  const words =
    name.endsWith('_fils') && Number.isSafeInteger(value)
      ? html` (<${Fils} fils=${value} currency=${currency} lang=${lang} />)`
      : name.endsWith('_at') && typeof value === 'string'
        ? html` (<bdi>${formatDate(value, lang)}</bdi>)`
        : null
  return html`<dd dir="ltr">${exact}${words}</dd>`
}

/**
 * A signed body as a person reads it: one plain sentence first (`names`: the engagement's job
 * title, agent and provider names), then behind a disclosure its fields, canonical bytes and
 * SHA-256; the hash's check against the rental's stays in sight.
 */
export function Signable({ title, signed, t, lang, names }) {
  const [canon, setCanon] = useState(/** @type {Awaited<ReturnType<typeof canonicalOf>> | null} */ (null))
  useEffect(() => {
    void canonicalOf(signed.body).then(setCanon)
  }, [signed.hash])
  const matches = canon && `sha256:${canon.sha256}` === signed.hash
  const summary = summaryOf(signed.body, names, t, lang)
  return html`<section class="signable">
    <h3>${title}</h3>
    ${summary ? html`<p class="sign-summary" data-testid="sign-summary">${summary}</p>` : null}
    <details><summary>${t('sign.details')}</summary>
      <dl class="terms">${Object.entries(signed.body).map(
        ([name, value]) => html`<dt key=${name}>${name}</dt>
          <${FieldValue} name=${name} value=${value} currency=${signed.body.currency ?? 'AED'} lang=${lang} />`,
      )}</dl>
      <p>${t('sign.bytes')}</p><pre dir="ltr" class="jcs">${canon?.text}</pre>
    </details>
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
  const [key, setKey] = useState(
    /** @type {Awaited<ReturnType<typeof currentKey>> | undefined} */ (undefined),
  )
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
      await api('POST', `/api/engagements/${engagement.id}/signatures?lang=${lang}`, {
        sla_signature,
        escrow_signatures,
      }),
    )
  }
  return html`<section class="card sign" aria-labelledby="sign-title">
    <h2 id="sign-title">${t('sign.title')}</h2>
    <p>${t('sign.intro')}</p>
    <${Signable} title=${t('sign.sla')} signed=${pkg.sla} t=${t} lang=${lang} names=${engagement} />
    ${escrows.map((e, i) => html`<${Signable} key=${e.hash} title=${t('sign.escrow', { n: i + 1 })} signed=${e} t=${t} lang=${lang} names=${engagement} />`)}
    ${
      key === undefined
        ? html`<${Loading} t=${t} />`
        : key?.did !== engagement.client_did
          ? html`<${OtherKey} engagementKey=${engagement.client_did} browserKey=${key?.did} t=${t} alert />`
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
  const loaded = useLoad(`/api/engagements/${encodeURIComponent(id)}?lang=${lang}`)
  const [detail, setDetail] = useState(
    /** @type {import('./api-types').Answer<'GET', '/api/engagements/{id}'> | null} */ (null),
  )
  useEffect(() => setDetail(loaded.data), [loaded.data])
  if (loaded.error && !detail)
    return html`<h1>${t('nav.engagements')}</h1><${ErrorText} error=${loaded.error} t=${t} />
      <p><a href="#/engagements">${t('nav.engagements')}</a></p>`
  if (!detail) return html`<${Loading} t=${t} />`
  const e = detail.engagement
  return html`<p><a href="#/engagements"><span class="back-arrow" aria-hidden="true">←</span> ${t('eng.title')}</a></p>
    <h1 data-testid="engagement-title">${e.job_title ?? e.job_id}</h1>
    <section class="card">
      <dl>
        <dt>${t('eng.state')}</dt><dd data-testid="engagement-state">${t(`eng.state.${e.state}`)}</dd>
        <dt>${t('eng.agent')}</dt><dd data-testid="engagement-agent">${e.agent_name ?? t('sign.the_agent')}</dd>
        ${e.provider_name ? html`<dt>${t('eng.provider')}</dt><dd>${e.provider_name}</dd>` : null}
        <dt>${t('eng.price')}</dt><dd><${Fils} fils=${e.price_fils} currency=${e.currency} lang=${lang} /> ${t('market.per_task')}</dd>
        <dt>${t('eng.created')}</dt><dd><${When} iso=${e.created_at} lang=${lang} /></dd>
      </dl>
      <p class="ids">
        <${CopyId} label=${t('eng.id')} value=${e.id} t=${t} />
        <${CopyId} label=${t('task.agent_did')} value=${e.agent_did} t=${t} />
        <${CopyId} label=${t('eng.client_did')} value=${e.client_did} t=${t} />
      </p>
      <h2>${t('eng.escrows')}</h2>
      <ul>${e.escrows.map(
        (
          x,
        ) => html`<li key=${x.id}><${Fils} fils=${x.amount_fils} currency=${x.currency} lang=${lang} />${separator(lang)}${t(`escrow.${x.state}`)}
          ${x.task_id ? html`${separator(lang)}<a href=${`#/tasks/${x.task_id}`}>${t('escrow.task')}</a>` : null}</li>`,
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
