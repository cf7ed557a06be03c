// @ts-check
// Batches: a new batch from a list of task texts (what it will cost said before it runs), the list
// with each batch's progress while it runs (polled), and a batch's own screen: its progress, its
// tasks (linked), and its results to download as JSON Lines or CSV.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { formatFils, formatNumber, separator } from './i18n.js'
import { engagementLabel } from './names.js'
import { Pager, usePaged } from './paging.js'
import { useLoadAgain } from './reload.js'
import { say } from './toast.js'
import { ActionButton, Empty, ErrorText, html, listBody, Loading, useLoad, When } from './ui.js'

const DONE = new Set(['completed', 'completed_with_errors', 'canceled'])

/** The batch, polled every second until it has run. */
function useBatch(first, id) {
  const [batch, setBatch] = useState(first)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  useEffect(() => {
    if (batch && DONE.has(batch.state)) return undefined
    const timer = globalThis.setTimeout(
      () =>
        void api('GET', `/api/batches/${encodeURIComponent(id)}`).then(setBatch, (e) => {
          if (!batch) setError(e)
        }),
      batch ? 1000 : 0,
    )
    return () => globalThis.clearTimeout(timer)
  }, [batch])
  return { batch, error }
}

const nameOf = (batch, t, lang) => batch.name ?? t('batchd.unnamed', { n: formatNumber(batch.total, lang) })

function Progress({ batch, t, lang }) {
  const c = batch.counts
  const done = c.completed + c.failed + c.canceled
  return html`<progress max=${batch.total} value=${done} aria-label=${t('batch.progress')}></progress>
    ${t('batch.counts', {
      done: formatNumber(done, lang),
      total: formatNumber(batch.total, lang),
      failed: formatNumber(c.failed, lang),
    })}`
}

function BatchRow({ batch: first, t, lang }) {
  const { batch } = useBatch(first, first.id)
  return html`<tr data-batch=${batch.id} data-state=${batch.state}>
    <td><a href=${`#/batches/${encodeURIComponent(batch.id)}`}>${nameOf(batch, t, lang)}</a></td>
    <td><${Progress} batch=${batch} t=${t} lang=${lang} /></td>
    <td>${t(`batch.${batch.state}`)}</td><td><${When} iso=${batch.created_at} lang=${lang} /></td></tr>`
}

const linesOf = (texts) =>
  texts
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)

/** What the batch will cost: tasks × the engagement's price, against what the wallet holds. */
function CostPreview({ engagement, count, wallet, t, lang }) {
  if (!engagement || count === 0) return null
  const total = engagement.price_fils * count
  const money = (fils) => formatFils(fils, engagement.currency ?? 'AED', lang)
  const short = wallet && wallet.amount_fils < total
  return html`<div class=${short ? 'card warning cost' : 'card cost'} data-testid="cost-preview" aria-live="polite">
    <p><strong>${t('batchd.cost', { n: formatNumber(count, lang), price: money(engagement.price_fils), total: money(total) })}</strong></p>
    <p class="hint">${t('batchd.cost_how')}</p>
    ${wallet ? html`<p>${t('batchd.wallet_holds', { amount: wallet.display })}</p>` : null}
    ${short ? html`<p>${t('batchd.short')} <a href="#/wallet">${t('wallet.add')}</a></p>` : null}
  </div>`
}

function NewBatch({ t, lang, onMade }) {
  const engagements = useLoad('/api/engagements?limit=50')
  const wallet = useLoad(`/api/wallet?lang=${lang}`)
  const [engagement, setEngagement] = useState('')
  const [texts, setTexts] = useState('')
  const fields = useFieldProblems()
  const active = (engagements.data?.engagements ?? []).filter((e) => e.state === 'active')
  if (engagements.data && active.length === 0)
    return html`<${Empty}>${t('batch.need_engagement')} <a href="#/market">${t('nav.market')}</a><//>`
  const chosen = active.find((e) => e.id === engagement)
  const run = async () => {
    const items = linesOf(texts)
    fields.check({
      'batch-engagement': engagement ? null : t('field.choose_engagement'),
      'batch-items': items.length ? null : t('field.batch_items'),
    })
    const made = await api('POST', '/api/batches', { engagement_id: engagement, items })
    setTexts('')
    say(t('batchd.started', { n: formatNumber(made.total, lang) }))
    onMade(made)
  }
  const label = (e) =>
    `${e.job_title ?? e.job_id}${separator(lang)}${formatFils(e.price_fils, e.currency ?? 'AED', lang)}`
  return html`<form class="form card" onSubmit=${(e) => e.preventDefault()} id="new-batch">
    <h2>${t('batch.new')}</h2>
    <label for="batch-engagement">${t('incident.engagement')}</label>
    <select id="batch-engagement" value=${engagement} ...${fields.at('batch-engagement')}
      onChange=${(e) => setEngagement(e.currentTarget.value)}>
      <option value="">—</option>
      ${active.map((e) => html`<option key=${e.id} value=${e.id}>${label(e)}</option>`)}
    </select>
    ${fields.note('batch-engagement')}
    <label for="batch-items">${t('batch.items')}</label>
    <textarea id="batch-items" rows="4" value=${texts} ...${fields.at('batch-items')}
      onInput=${(e) => setTexts(e.currentTarget.value)}></textarea>
    ${fields.note('batch-items')}
    <${CostPreview} engagement=${chosen} count=${linesOf(texts).length} wallet=${wallet.data?.balance} t=${t} lang=${lang} />
    <${ActionButton} kind="primary" label=${t('batch.run')} busy=${t('loading')} t=${t} action=${run} />
  </form>`
}

export function Batches({ t, lang }) {
  const [made, setMade] = useState(0)
  const list = usePaged('/api/batches', { field: 'batches', reloadKey: made })
  const rows = list.data?.batches
  return html`<h1>${t('nav.batches')}</h1>
    <${NewBatch} t=${t} lang=${lang} onMade=${() => setMade((n) => n + 1)} />
    <${ErrorText} error=${list.error} t=${t} />
    ${listBody(
      list,
      rows,
      t,
      'batchd.empty',
      () => html`<table class="list" data-testid="batches"><thead><tr><th>${t('col.name')}</th><th>${t('batch.progress')}</th>
              <th>${t('col.state')}</th><th>${t('col.created')}</th></tr></thead>
            <tbody>${rows.map((b) => html`<${BatchRow} key=${b.id} batch=${b} t=${t} lang=${lang} />`)}</tbody></table>
            <${Pager} page=${list.page} t=${t} lang=${lang} />`,
    )}`
}

const PAGE = 50

/** The batch's items, a page at a time, each with its task (linked once made). */
function Items({ id, t, lang, state }) {
  const [from, setFrom] = useState(0)
  const items = useLoadAgain(`/api/batches/${encodeURIComponent(id)}/items?from=${from}&limit=${PAGE}`, state)
  const rows = items.data?.items
  return html`<${ErrorText} error=${items.error} t=${t} />
    ${listBody(
      items,
      rows,
      t,
      'batchd.no_items',
      () => html`<table class="list" data-testid="batch-items"><thead><tr><th>${t('batchd.item')}</th>
          <th>${t('col.state')}</th><th>${t('task.what')}</th></tr></thead>
        <tbody>${rows.map(
          (i) => html`<tr key=${i.index} data-item=${i.index}>
            <td>${formatNumber(i.index + 1, lang)}</td>
            <td><span class=${`state state-${i.state}`}>${t(`batchd.item.${i.state}`)}</span>${i.error ? html`<br /><small>${t('batchd.failed_item')}</small>` : null}</td>
            <td>${
              i.task_id
                ? html`<a href=${`#/tasks/${encodeURIComponent(i.task_id)}`} data-testid="item-task"><bdi dir="auto">${i.input_preview ?? t('batchd.task_n', { n: formatNumber(i.index + 1, lang) })}</bdi></a>`
                : html`${i.input_preview ? html`<bdi dir="auto">${i.input_preview}</bdi><br />` : null}<small class="hint">${t('batchd.no_task_yet')}</small>`
            }</td>
          </tr>`,
        )}</tbody></table>
        <p class="pager">
          ${from > 0 ? html`<button type="button" onClick=${() => setFrom(Math.max(0, from - PAGE))}>${t('batchd.previous')}</button>` : null}
          ${items.data.next_from !== null ? html`<button type="button" onClick=${() => setFrom(items.data.next_from)}>${t('batchd.next')}</button>` : null}
        </p>`,
    )}`
}

/** The batch's engagement by its job, agent and date (until it loads: "Open the engagement"). */
function EngagementLink({ id, t, lang }) {
  const loaded = useLoad(`/api/engagements/${encodeURIComponent(id)}?lang=${lang}`)
  const engagement = loaded.data?.engagement
  return html`<a href=${`#/engagements/${encodeURIComponent(id)}`}>${engagement ? engagementLabel(engagement, lang) : t('batchd.open_engagement')}</a>`
}

export function Batch({ id, t, lang }) {
  const { batch, error } = useBatch(null, id)
  if (error) return html`<${ErrorText} error=${error} t=${t} />`
  if (!batch) return html`<${Loading} t=${t} />`
  const file = (format) => `/api/batches/${encodeURIComponent(id)}/export?format=${format}`
  return html`<p><a href="#/batches"><span class="back-arrow" aria-hidden="true">←</span> ${t('nav.batches')}</a></p>
    <h1>${nameOf(batch, t, lang)}</h1>
    <section class="card summary" data-testid="batch" data-state=${batch.state}>
      <dl>
        <dt>${t('batch.progress')}</dt><dd><${Progress} batch=${batch} t=${t} lang=${lang} /></dd>
        <dt>${t('col.state')}</dt><dd>${t(`batch.${batch.state}`)}</dd>
        <dt>${t('col.created')}</dt><dd><${When} iso=${batch.created_at} lang=${lang} /></dd>
        ${batch.finished_at ? html`<dt>${t('batchd.finished')}</dt><dd><${When} iso=${batch.finished_at} lang=${lang} /></dd>` : null}
        <dt>${t('batchd.engagement')}</dt><dd><${EngagementLink} id=${batch.engagement_id} t=${t} lang=${lang} /></dd>
      </dl>
    </section>
    <section class="card" aria-labelledby="batch-download-title">
      <h2 id="batch-download-title">${t('batchd.download')}</h2>
      <p class="hint">${t(DONE.has(batch.state) ? 'batchd.download_hint' : 'batchd.download_running')}</p>
      <p class="downloads">
        <a class="button" href=${file('csv')} download=${`batch-${id}.csv`} data-testid="download-csv">${t('batchd.csv')}</a>
        <a class="button" href=${file('jsonl')} download=${`batch-${id}.jsonl`} data-testid="download-jsonl">${t('batchd.jsonl')}</a>
      </p>
    </section>
    <section aria-labelledby="batch-items-title">
      <h2 id="batch-items-title">${t('batchd.items')}</h2>
      <${Items} id=${id} t=${t} lang=${lang} state=${`${batch.state}.${batch.counts.completed}.${batch.counts.failed}`} />
    </section>`
}
