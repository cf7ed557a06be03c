// @ts-check
// One engagement beyond its terms: the SLA measured now, the agent version (a pending one accepted by
// signing its addendum in this browser), capacity and config, files, connections (read-only), the
// releases to sign, the receipts verified here, and the end with its result.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { Signable } from './engagements.js'
import { formatNumber, separator } from './i18n.js'
import { currentKey, signBody } from './keys.js'
import { CopyId, dotted, OtherKey } from './names.js'
import { Receipts } from './receipts.js'
import { useLoadAgain } from './reload.js'
import { ActionButton, Empty, ErrorText, Fils, html, Loading, When } from './ui.js'

/** @type {(id: string) => `/api/engagements/${string}`} */
const base = (id) => `/api/engagements/${encodeURIComponent(id)}`

/** A card loading `path`: its error in words, else `children(data)`. */
function Card({ title, path, t, testid, children, reloadKey = 0 }) {
  const loaded = useLoadAgain(path, reloadKey)
  const slug = testid ?? title
  return html`<section class="card" aria-labelledby=${`${slug}-title`} data-testid=${testid}>
    <h2 id=${`${slug}-title`}>${t(title)}</h2>
    <${ErrorText} error=${loaded.error} t=${t} />
    ${loaded.data ? children(loaded.data, loaded.reload) : loaded.error ? null : html`<${Loading} t=${t} />`}
  </section>`
}

/** A term's target or measure in its unit: milliseconds, seconds, or basis points as a percentage. */
function measure(value, unit, lang) {
  if (value === null || value === undefined) return '—'
  if (unit === 'bps')
    return formatNumber(value / 10_000, lang, { style: 'percent', maximumFractionDigits: 2 })
  const unitName = unit === 'ms' ? 'millisecond' : 'second'
  return formatNumber(value, lang, { style: 'unit', unit: unitName, maximumFractionDigits: 1 })
}

function Sla({ id, t, lang }) {
  return html`<${Card} title="sla.title" testid="sla" path=${`${base(id)}/sla`} t=${t}>${(sla) => html`
    <p class="hint">${sla.defaulted ? t('sla.defaulted') : t('sla.signed_terms')}${separator(lang)}${t('sla.measured_at')}${' '}<${When} iso=${sla.measured_at} lang=${lang} /></p>
    ${
      sla.measurements.length === 0
        ? html`<${Empty}>${t('sla.no_terms')}<//>`
        : html`<table class="list"><thead><tr><th>${t('sla.term')}</th><th>${t('sla.target')}</th>
            <th>${t('sla.measured')}</th><th>${t('col.state')}</th></tr></thead>
          <tbody>${sla.measurements.map(
            (m) => html`<tr key=${m.term} data-term=${m.term}>
              <td>${t(`sla.term.${m.term}`)}</td>
              <td>${t(`sla.rule.${m.rule}`)} ${measure(m.target, m.unit, lang)}</td>
              <td>${measure(m.measured, m.unit, lang)} <small>${t('sla.window', { n: formatNumber(m.window.observed, lang) })}</small></td>
              <td><span class=${`state sla-${m.status}`}>${t(`sla.status.${m.status}`)}</span>
                ${m.breached_since ? html` <small>${t('sla.since')} <${When} iso=${m.breached_since} lang=${lang} /></small>` : null}</td>
            </tr>`,
          )}</tbody></table>`
    }
    <p>${t('sla.credits', { n: formatNumber(sla.credits.count, lang) })}
      ${sla.credits.count > 0 ? html`${separator(lang)}<${Fils} fils=${sla.credits.total_fils} lang=${lang} />` : null}</p>`}<//>`
}

function Version({ id, engagement, t, lang }) {
  const [key, setKey] = useState(
    /** @type {Awaited<ReturnType<typeof currentKey>> | undefined} */ (undefined),
  )
  const [reload, setReload] = useState(0)
  useEffect(() => void currentKey().then(setKey, () => setKey(null)), [])
  const accept = async (pending) => {
    const signature = await signBody(key, pending.addendum.body)
    await api('POST', `${base(id)}/version/accept`, { addendum_hash: pending.addendum.hash, signature })
    setReload((n) => n + 1)
  }
  return html`<${Card} title="version.title" testid="version" path=${`${base(id)}/version`} t=${t} reloadKey=${reload}>${(
    v,
  ) => html`
    <p>${t('version.current')}: <strong dir="ltr">${v.version ?? t('version.initial')}</strong></p>
    ${
      v.pending
        ? html`<div class="pending"><p>${t('version.pending', { version: v.pending.version })}</p>
            <pre dir="auto">${v.pending.changelog}</pre>
            <${Signable} title=${t('version.addendum')} signed=${v.pending.addendum} t=${t} lang=${lang} names=${engagement} />
            ${
              key?.did === engagement.client_did
                ? html`<${ActionButton} kind="primary" label=${t('version.accept')} busy=${t('sign.signing')} t=${t}
                    action=${() => accept(v.pending)} />`
                : html`<${OtherKey} engagementKey=${engagement.client_did} browserKey=${key?.did} t=${t} />`
            }</div>`
        : html`<p class="hint">${t('version.none_pending')}</p>`
    }
    ${
      v.addenda.length > 0
        ? html`<h3>${t('version.addenda')}</h3><ul>${v.addenda.map(
            (a) =>
              html`<li key=${a.hash}>${dotted(
                [
                  html`<span dir="ltr">${a.from_version ?? t('version.initial')} → ${a.to_version}</span>`,
                  html`<${When} iso=${a.accepted_at} lang=${lang} />`,
                ],
                lang,
              )}</li>`,
          )}</ul>`
        : null
    }`}<//>`
}

const limit = (value, t, lang) => (value === null ? t('capacity.none') : formatNumber(value, lang))

function Settings({ id, t, lang }) {
  return html`<div class="two">
    <${Card} title="capacity.title" testid="capacity" path=${`${base(id)}/capacity`} t=${t}>${(c) => html`<dl>
      <dt>${t('capacity.concurrent')}</dt><dd>${limit(c.max_concurrent_tasks, t, lang)}</dd>
      <dt>${t('capacity.per_minute')}</dt><dd>${limit(c.tasks_per_minute, t, lang)}</dd>
      ${c.listing_max_concurrency !== null ? html`<dt>${t('capacity.listing')}</dt><dd>${formatNumber(c.listing_max_concurrency, lang)}</dd>` : null}
    </dl>`}<//>
    <${Card} title="config.title" testid="config" path=${`${base(id)}/config`} t=${t}>${(c) => html`<dl>
      <dt>${t('config.approval')}</dt><dd>${t(`config.approval.${c.approval.mode}`)}${
        c.approval.above_fils !== undefined
          ? html` (<${Fils} fils=${c.approval.above_fils} lang=${lang} />)`
          : null
      }</dd>
      <dt>${t('config.max_price')}</dt><dd>${c.max_task_price_fils === null ? t('capacity.none') : html`<${Fils} fils=${c.max_task_price_fils} lang=${lang} />`}</dd>
      <dt>${t('config.output_ttl')}</dt><dd>${formatNumber(c.output_ttl_s / 3600, lang, { style: 'unit', unit: 'hour', maximumFractionDigits: 1 })}</dd>
      <dt>${t('config.language')}</dt><dd>${c.default_language === 'ar' ? 'العربية' : 'English'}</dd>
      <dt>${t('config.version')}</dt><dd>${formatNumber(c.version, lang)}</dd>
    </dl>`}<//>
  </div>`
}

function Files({ id, t, lang }) {
  return html`<${Card} title="files.title" testid="files" path=${`${base(id)}/files?limit=50`} t=${t}>${(
    f,
  ) =>
    f.files.length === 0
      ? html`<${Empty}>${t('files.empty')}<//>`
      : html`<ul>${f.files.map(
          (file) => html`<li key=${file.id}>${dotted(
            [
              html`<a href=${file.url} download=${file.name} dir="auto">${file.name}</a>`,
              formatNumber(file.size_bytes, lang, { style: 'unit', unit: 'byte', unitDisplay: 'narrow' }),
              html`<${When} iso=${file.created_at} lang=${lang} />`,
            ],
            lang,
          )}
            <${CopyId} label=${t('files.sha256')} value=${file.sha256} t=${t} short /></li>`,
        )}</ul>`}<//>`
}

function Connections({ id, t, lang }) {
  return html`<${Card} title="connections.title" testid="connections" path=${`${base(id)}/connect/connections`} t=${t}>${(
    c,
  ) =>
    c.connections.length === 0
      ? html`<${Empty}>${t('connections.empty')}<//>`
      : html`<table class="list"><thead><tr><th>${t('col.url')}</th><th>${t('connections.tools')}</th>
          <th>${t('connections.health')}</th></tr></thead><tbody>${c.connections.map(
            (x) => html`<tr key=${x.id}><td><code dir="ltr">${x.url}</code> <small>…${x.key_hint}</small></td>
              <td>${x.allowed_tools.map((tool) => tool.name).join(', ') || '—'}</td>
              <td>${t('connections.calls', { n: formatNumber(x.health.calls, lang), failed: formatNumber(x.health.failures, lang) })}
                ${x.health.last_error ? html`<br /><span class="error">${x.health.last_error}</span>` : null}</td></tr>`,
          )}</tbody></table>`}<//>`
}

/**
 * The money to sign: escrows offered for new tasks (signed here, they open on the rail), and each
 * completed task's escrow, paid out on the release instruction this browser signs.
 */
function Releases({ id, engagement, t, lang, onReleased }) {
  const [reload, setReload] = useState(0)
  const [key, setKey] = useState(
    /** @type {Awaited<ReturnType<typeof currentKey>> | undefined} */ (undefined),
  )
  useEffect(() => void currentKey().then(setKey, () => setKey(null)), [])
  const done = () => {
    setReload((n) => n + 1)
    onReleased()
  }
  const release = async (r) => {
    const signature = await signBody(key, r.instruction)
    await api('POST', `${base(id)}/releases`, {
      escrow_hash: r.escrow.hash,
      instruction: { body: r.instruction, signature },
    })
    done()
  }
  const signEscrows = async (escrows) => {
    const escrow_signatures = []
    for (const e of escrows)
      escrow_signatures.push({ escrow_hash: e.hash, signature: await signBody(key, e.body) })
    await api('POST', `${base(id)}/signatures`, { escrow_signatures })
    done()
  }
  const mine = key?.did === engagement.client_did
  const notMine = () =>
    html`<${OtherKey} engagementKey=${engagement.client_did} browserKey=${key?.did} t=${t} />`
  return html`<${Card} title="release.title" testid="releases" path=${`${base(id)}/releases/pending`} t=${t} reloadKey=${reload}>${(
    p,
  ) => html`
    ${
      p.escrows_to_sign.length > 0
        ? html`<div class="to-sign" data-testid="escrows-to-sign"><h3>${t('release.escrows_to_sign')}</h3>
            ${p.escrows_to_sign.map(
              (e, i) =>
                html`<${Signable} key=${e.hash} title=${t('sign.escrow', { n: i + 1 })} signed=${e} t=${t} lang=${lang} names=${engagement} />`,
            )}
            ${
              mine
                ? html`<${ActionButton} kind="primary" label=${t('release.sign_escrows')} busy=${t('sign.signing')} t=${t}
                    action=${() => signEscrows(p.escrows_to_sign)} />`
                : notMine()
            }</div>`
        : null
    }
    ${
      p.releases.length === 0
        ? p.escrows_to_sign.length === 0
          ? html`<${Empty}>${t('release.empty')}<//>`
          : null
        : html`<ul class="releases">${p.releases.map(
            (r) => html`<li key=${r.escrow.id} data-escrow=${r.escrow.id}>
            <p><${Fils} fils=${r.escrow.amount_fils} currency=${r.escrow.currency} lang=${lang} /> ·
              <a href=${`#/tasks/${r.task.id}`}>${t('escrow.task')}</a> ·
              <${When} iso=${r.task.completed_at} lang=${lang} /></p>
            <${Signable} title=${t('release.instruction')} signed=${{ body: r.instruction, hash: null }} t=${t} lang=${lang} names=${engagement} />
            ${
              mine
                ? html`<${ActionButton} kind="primary" label=${t('release.button')} busy=${t('sign.signing')} t=${t}
                    action=${() => release(r)} />`
                : notMine()
            }
          </li>`,
          )}</ul>`
    }`}<//>`
}

/** Ending: a second, explicit confirmation, then the result as the rental settled it. */
function End({ id, t, lang, onEnded }) {
  const [asking, setAsking] = useState(false)
  const [result, setResult] = useState(
    /** @type {import('./api-types').Answer<'POST', '/api/engagements/{id}/end'> | null} */ (null),
  )
  const end = async () => {
    setResult(await api('POST', `${base(id)}/end?lang=${lang}`, { running: 'finish' }))
    onEnded()
  }
  return html`<section class="card" aria-labelledby="end-title" data-testid="end">
    <h2 id="end-title">${t('end.title')}</h2>
    ${
      result
        ? html`<p class="ok" role="status">${t('end.done')} <${When} iso=${result.ended_at} lang=${lang} /></p>
          <dl>${['escrowed', 'released', 'fees', 'returned', 'pending_release', 'awaiting_task'].map(
            (k) =>
              html`<dt key=${k}>${t(`end.${k}`)}</dt><dd><bdi class="money">${result.statement[k].display}</bdi></dd>`,
          )}</dl>`
        : asking
          ? html`<p class="warning" role="alert">${t('end.confirm_text')}</p>
            <div class="actions"><${ActionButton} kind="danger" label=${t('end.confirm')} busy=${t('loading')} t=${t} action=${end} />
              <button type="button" onClick=${() => setAsking(false)}>${t('cancel')}</button></div>`
          : html`<p class="hint">${t('end.intro')}</p>
            <button type="button" onClick=${() => setAsking(true)}>${t('end.button')}</button>`
    }
  </section>`
}

/** Everything below the engagement's terms; `onChange` reloads the engagement (an end, a release). */
export function EngagementMore({ detail, t, lang, onChange }) {
  const e = detail.engagement
  const [receipts, setReceipts] = useState(0)
  if (e.state === 'pending') return null
  const changed = () => {
    setReceipts((n) => n + 1)
    onChange()
  }
  return html`
    <${Releases} id=${e.id} engagement=${e} t=${t} lang=${lang} onReleased=${changed} />
    <${Receipts} did=${e.agent_did} t=${t} lang=${lang} reloadKey=${receipts}
      taskIds=${e.escrows.map((x) => x.task_id).filter(Boolean)} escrowIds=${e.escrows.map((x) => x.id)} />
    <${Sla} id=${e.id} t=${t} lang=${lang} />
    <${Version} id=${e.id} engagement=${e} t=${t} lang=${lang} />
    <${Settings} id=${e.id} t=${t} lang=${lang} />
    <${Files} id=${e.id} t=${t} lang=${lang} />
    <${Connections} id=${e.id} t=${t} lang=${lang} />
    ${e.state === 'active' ? html`<${End} id=${e.id} t=${t} lang=${lang} onEnded=${changed} />` : null}`
}
