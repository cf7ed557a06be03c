// Teams with their terms and, for each team task, its delegation chain as a read-only tree; batches
// with their progress while they run (polled), and a new batch from a list of task texts.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { formatNumber } from './i18n.js'
import { Pager, usePaged } from './paging.js'
import {
  ActionButton,
  Did,
  Empty,
  ErrorText,
  Fils,
  html,
  Loading,
  StateBadge,
  useLoad,
  When,
  listBody,
} from './ui.js'

const percent = (bps, lang) =>
  formatNumber(bps / 10_000, lang, { style: 'percent', maximumFractionDigits: 2 })

export function Teams({ t, lang }) {
  const list = usePaged('/api/teams', { field: 'teams' })
  const rows = list.data?.teams
  return html`<h1>${t('nav.teams')}</h1>
    <${ErrorText} error=${list.error} t=${t} />
    ${listBody(
      list,
      rows,
      t,
      'teams.empty',
      () => html`<table class="list" data-testid="teams"><thead><tr><th>${t('col.name')}</th><th>${t('col.state')}</th>
              <th>${t('teams.members')}</th><th>${t('col.created')}</th></tr></thead>
            <tbody>${rows.map(
              (
                team,
              ) => html`<tr key=${team.id}><td><a href=${`#/teams/${team.id}`} dir="auto">${team.name}</a></td>
                <td>${t(`team.${team.state}`)}</td><td>${formatNumber(team.terms.members.length, lang)}</td>
                <td><${When} iso=${team.created_at} lang=${lang} /></td></tr>`,
            )}</tbody></table>
            <${Pager} page=${list.page} t=${t} lang=${lang} />`,
    )}`
}

/** One hop of a chain and the hops it delegated to, nested. */
function Hop({ node, t, lang }) {
  return html`<li data-hop=${node.hop_id}>
    <div class="hop"><${Did} did=${node.agent_did} /> <span class=${`state state-${node.state}`}>${t(`hop.${node.state}`)}</span>
      ${node.cost_fils > 0 ? html` · <${Fils} fils=${node.cost_fils} lang=${lang} />` : null}
      ${node.signature_verified === true ? html` · <span class="ok">✓ ${t('chain.signed')}</span>` : null}
      ${node.signature_verified === false ? html` · <span class="error">✗ ${t('chain.bad_signature')}</span>` : null}
      ${node.refusal ? html` · <span class="error">${node.refusal}</span>` : null}
      ${node.receipt ? html`<br /><small>${t('task.receipt')} <code dir="ltr" class="hash">${node.receipt.leaf_hash}</code></small>` : null}</div>
    ${node.children.length > 0 ? html`<ul class="tree">${node.children.map((c) => html`<${Hop} key=${c.hop_id} node=${c} t=${t} lang=${lang} />`)}</ul>` : null}
  </li>`
}

function Chain({ team, taskId, t, lang }) {
  const chain = useLoad(`/api/teams/${encodeURIComponent(team)}/tasks/${encodeURIComponent(taskId)}/chain`)
  if (chain.error) return html`<${ErrorText} error=${chain.error} t=${t} />`
  if (!chain.data) return html`<${Loading} t=${t} />`
  return html`<ul class="tree" aria-label=${t('chain.title')}><${Hop} node=${chain.data.root} t=${t} lang=${lang} /></ul>`
}

export function Team({ id, t, lang }) {
  const team = useLoad(`/api/teams/${encodeURIComponent(id)}`)
  const tasks = useLoad('/api/tasks?limit=100')
  const d = team.data
  if (team.error && !d) return html`<${ErrorText} error=${team.error} t=${t} />`
  if (!d) return html`<${Loading} t=${t} />`
  const mine = (tasks.data?.tasks ?? []).filter((x) => d.engagement_id && x.engagement_id === d.engagement_id)
  return html`<p><a href="#/teams"><span class="back-arrow" aria-hidden="true">←</span> ${t('nav.teams')}</a></p>
    <h1 dir="auto">${d.name}</h1>
    <section class="card"><dl>
      <dt>${t('col.state')}</dt><dd>${t(`team.${d.state}`)}</dd>
      <dt>${t('teams.lead')}</dt><dd><${Did} did=${d.lead_did} /></dd>
      <dt>${t('teams.budget')}</dt><dd><${Fils} fils=${d.terms.task_budget_fils} lang=${lang} /></dd>
      <dt>${t('teams.depth')}</dt><dd>${formatNumber(d.terms.max_depth, lang)}</dd>
      ${d.engagement_id ? html`<dt>${t('eng.title')}</dt><dd><a href=${`#/engagements/${d.engagement_id}`}><code dir="ltr">${d.engagement_id}</code></a></dd>` : null}
    </dl>
    <h2>${t('teams.members')}</h2>
    <ul>${d.terms.members.map(
      (m) => html`<li key=${m.agent_did}><${Did} did=${m.agent_did} /> · ${percent(m.share_bps, lang)}
        · ${t('teams.hop_cost')} <${Fils} fils=${m.hop_fils} lang=${lang} /></li>`,
    )}</ul></section>
    <section class="card" aria-labelledby="chains-title"><h2 id="chains-title">${t('chain.title')}</h2>
      ${
        mine.length === 0
          ? html`<${Empty}>${t('teams.no_tasks')}<//>`
          : mine.map(
              (task) => html`<details key=${task.id}><summary><code dir="ltr">${task.id}</code>
                <${StateBadge} state=${task.state} t=${t} /> <${When} iso=${task.created_at} lang=${lang} /></summary>
                <${Chain} team=${d.id} taskId=${task.id} t=${t} lang=${lang} /></details>`,
            )
      }
    </section>`
}

const DONE = new Set(['completed', 'completed_with_errors', 'canceled'])

/** A batch's counts as a progress bar, polled every second while it runs. */
function BatchProgress({ batch: first, t, lang }) {
  const [batch, setBatch] = useState(first)
  useEffect(() => {
    if (DONE.has(batch.state)) return
    const timer = globalThis.setTimeout(
      () => void api('GET', `/api/batches/${encodeURIComponent(batch.id)}`).then(setBatch, () => undefined),
      1000,
    )
    return () => globalThis.clearTimeout(timer)
  }, [batch])
  const c = batch.counts
  const done = c.completed + c.failed + c.canceled
  return html`<tr data-batch=${batch.id} data-state=${batch.state}>
    <td>${batch.name ? html`<bdi dir="auto">${batch.name}</bdi>` : html`<code dir="ltr">${batch.id}</code>`}</td>
    <td><progress max=${batch.total} value=${done} aria-label=${t('batch.progress')}></progress>
      ${t('batch.counts', {
        done: formatNumber(done, lang),
        total: formatNumber(batch.total, lang),
        failed: formatNumber(c.failed, lang),
      })}</td>
    <td>${t(`batch.${batch.state}`)}</td><td><${When} iso=${batch.created_at} lang=${lang} /></td></tr>`
}

function NewBatch({ t, onMade }) {
  const engagements = useLoad('/api/engagements?limit=50')
  const [engagement, setEngagement] = useState('')
  const [texts, setTexts] = useState('')
  const fields = useFieldProblems()
  const active = (engagements.data?.engagements ?? []).filter((e) => e.state === 'active')
  if (engagements.data && active.length === 0)
    return html`<${Empty}>${t('batch.need_engagement')} <a href="#/market">${t('nav.market')}</a><//>`
  const run = async () => {
    const items = texts
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean)
    fields.check({
      'batch-engagement': engagement ? null : t('field.choose_engagement'),
      'batch-items': items.length ? null : t('field.batch_items'),
    })
    await api('POST', '/api/batches', { engagement_id: engagement, items })
    setTexts('')
    onMade()
  }
  return html`<form class="form card" onSubmit=${(e) => e.preventDefault()}>
    <h2>${t('batch.new')}</h2>
    <label for="batch-engagement">${t('incident.engagement')}</label>
    <select id="batch-engagement" value=${engagement} ...${fields.at('batch-engagement')}
      onChange=${(e) => setEngagement(e.currentTarget.value)}>
      <option value="">—</option>
      ${active.map((e) => html`<option key=${e.id} value=${e.id}>${e.job_id} · ${e.id}</option>`)}
    </select>
    ${fields.note('batch-engagement')}
    <label for="batch-items">${t('batch.items')}</label>
    <textarea dir="auto" id="batch-items" rows="4" value=${texts} ...${fields.at('batch-items')}
      onInput=${(e) => setTexts(e.currentTarget.value)}></textarea>
    ${fields.note('batch-items')}
    <${ActionButton} kind="primary" label=${t('batch.run')} busy=${t('loading')} t=${t} action=${run} />
  </form>`
}

export function Batches({ t, lang }) {
  const [made, setMade] = useState(0)
  const list = usePaged('/api/batches', { field: 'batches', reloadKey: made })
  const rows = list.data?.batches
  return html`<h1>${t('nav.batches')}</h1>
    <${NewBatch} t=${t} onMade=${() => setMade((n) => n + 1)} />
    <${ErrorText} error=${list.error} t=${t} />
    ${listBody(
      list,
      rows,
      t,
      'batch.empty',
      () => html`<table class="list" data-testid="batches"><thead><tr><th>${t('col.name')}</th><th>${t('batch.progress')}</th>
              <th>${t('col.state')}</th><th>${t('col.created')}</th></tr></thead>
            <tbody>${rows.map((b) => html`<${BatchProgress} key=${b.id} batch=${b} t=${t} lang=${lang} />`)}</tbody></table>
            <${Pager} page=${list.page} t=${t} lang=${lang} />`,
    )}`
}
