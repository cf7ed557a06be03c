// @ts-check
// The tenant screens (the sidebar's Organization group links them) and the operations views: the organization, its
// connections' health, recent executions and the approvals waiting for a decision.
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { Danger } from './danger.js'
import { Members } from './members.js'
import { AgentName, CopyId, TaskName, TaskState } from './names.js'
import { Filter, Filters, Pager, usePaged } from './paging.js'
import { Profile } from './profile.js'
import { Loaded } from './tenant-ui.js'
import { Usage } from './usage.js'
import { ActionButton, allowed, ErrorText, Fils, html, Loading, useLoad, When } from './ui.js'
import { separator } from './i18n.js'

function Overview({ t, lang }) {
  const org = useLoad('/v1/org')
  const o = org.data
  return html`<h1>${t('tenant.org')}</h1>
    <${ErrorText} error=${org.error} t=${t} />
    ${
      !o
        ? org.error
          ? null
          : html`<${Loading} t=${t} />`
        : html`<section class="card summary" data-testid="org">
            <dl>
              <dt>${t('org.name')}</dt><dd dir="auto">${o.name}</dd>
              <dt>${t('org.plan')}</dt><dd>${o.plan.name} <small>${o.plan.description}</small></dd>
              <dt>${t('org.usage')}</dt>
              <dd data-testid="org-usage" data-tasks=${o.usage.tasks} data-fils=${o.usage.spend_fils}>${t(
                'org.usage_line',
                {
                  tasks: o.usage.tasks,
                  completed: o.usage.completed,
                  spend: '',
                },
              )}<${Fils} fils=${o.usage.spend_fils} currency=${o.usage.currency} lang=${lang} /></dd>
              <dt>${t('org.did')}</dt><dd>${o.did ? html`<${CopyId} label=${t('org.did')} value=${o.did} t=${t} />` : t('org.no_did')}</dd>
              <dt>${t('organization')}</dt><dd><${CopyId} label=${t('organization')} value=${o.id} t=${t} /></dd>
              <dt>${t('org.ledger')}</dt>
              <dd><a href=${o.ledger.url} rel="noopener" dir="ltr">${o.ledger.url}</a>${separator(lang)}<a href=${o.ledger.checkpoint_url} rel="noopener">${t('org.checkpoint')}</a></dd>
            </dl>
          </section>
          <section class="card" aria-labelledby="onboarding-title">
            <h2 id="onboarding-title">${t('org.onboarding')}: ${t(`onboarding.${o.onboarding.state}`)}</h2>
            ${o.onboarding.required ? html`<p class="hint">${t('onboarding.required')}</p>` : null}
            <ul class="steps">${o.onboarding.steps.map(
              (s) =>
                html`<li key=${s.name} class=${s.done ? 'done' : 'todo'}>${t(`step.${s.name}`)}: ${t(s.done ? 'step.done' : 'step.todo')}</li>`,
            )}</ul>
          </section>`
    }`
}

function Connections({ t, lang }) {
  const health = useLoad('/v1/connect/connections/health')
  return html`<h1>${t('tenant.connections')}</h1>
    <${Loaded} load=${health} rows=${health.data?.connections} t=${t} empty=${t('conn.empty')}>
      ${(rows) => html`<table class="list" data-testid="connections">
        <thead><tr><th>${t('conn.provider')}</th><th>${t('conn.health')}</th><th>${t('conn.checked')}</th>
          <th>${t('conn.latency')}</th><th>${t('conn.error')}</th></tr></thead>
        <tbody>${rows.map(
          (c) => html`<tr key=${c.id}>
            <td><code dir="ltr">${c.provider}</code> <a href=${`#/engagements/${c.engagement_id}`}>${t('eng.open')}</a></td>
            <td><span class=${`state health-${c.state}`}>${t(`health.${c.state}`)}</span></td>
            <td><${When} iso=${c.checked_at} lang=${lang} /></td>
            <td>${c.latency_ms === null ? '—' : html`<bdi>${new Intl.NumberFormat(lang).format(c.latency_ms)} ms</bdi>`}</td>
            <td>${c.last_error ?? '—'}</td>
          </tr>`,
        )}</tbody>
      </table>`}
    <//>`
}

// the states a task and a tool call pass through, as GET /v1/executions filters them
const EXECUTION_STATES = {
  task: ['submitted', 'working', 'input-required', 'completed', 'failed', 'canceled', 'rejected'],
  tool_action: [
    'pending_approval',
    'approved',
    'running',
    'completed',
    'failed',
    'rejected',
    'timed_out',
    'refused',
  ],
}

function Executions({ t, lang }) {
  const [kind, setKind] = useState('')
  const [state, setState] = useState('')
  const states = [...new Set(kind ? EXECUTION_STATES[kind] : Object.values(EXECUTION_STATES).flat())]
  const page = usePaged(`/v1/executions?lang=${lang}`, {
    field: 'executions',
    filters: { kind, state: states.includes(state) ? state : '' },
    cursor: { param: 'cursor', next: 'next_cursor' },
  })
  return html`<h1>${t('tenant.executions')}</h1>
    <${Filters} t=${t}>
      <${Filter} id="exec-kind" label=${t('list.filter_kind')} value=${kind} onChange=${setKind}
        options=${[
          ['', t('list.all')],
          ['task', t('exec.kind.task')],
          ['tool_action', t('exec.kind.tool_action')],
        ]} />
      <${Filter} id="exec-state" label=${t('list.filter_state')} value=${state} onChange=${setState}
        options=${[['', t('list.all')], ...states.map((s) => [s, t(`state.${s}`)])]} />
    <//>
    <${Loaded} load=${page} rows=${page.data?.executions} t=${t} empty=${t('exec.empty')}>
      ${(rows) => html`<table class="list" data-testid="executions">
          <thead><tr><th>${t('task.what')}</th><th>${t('task.state')}</th><th>${t('eng.agent')}</th>
            <th>${t('exec.price')}</th><th>${t('task.created')}</th></tr></thead>
          <tbody>${rows.map(
            (x) => html`<tr key=${x.id} data-task=${x.task_id ?? x.id}>
              <td><${TaskName} task=${{ ...x, id: x.task_id ?? x.id }} t=${t} withAgent=${false} />${
                x.kind === 'tool_action'
                  ? html`<br /><small class="hint">${t('exec.tool_action')} <code dir="ltr">${x.tool}</code></small>`
                  : null
              }</td>
              <td><${TaskState} state=${x.state} t=${t} /></td>
              <td><${AgentName} name=${x.agent_name} did=${x.agent_did} t=${t} /></td>
              <td><${Fils} fils=${x.price_fils} lang=${lang} /></td>
              <td><${When} iso=${x.created_at} lang=${lang} /></td>
            </tr>`,
          )}</tbody>
        </table>
        <${Pager} page=${page.page} t=${t} lang=${lang} />`}
    <//>`
}

function Approvals({ me, t, lang }) {
  const pending = usePaged(`/v1/tools/approvals?lang=${lang}`, { field: 'approvals' })
  const mayDecide = allowed(me, 'approvals:write')
  const decide = (id, verb) => async () => {
    await api('POST', `/api/approvals/${encodeURIComponent(id)}/${verb}`, {})
    await pending.reload()
  }
  return html`<h1>${t('tenant.approvals')}</h1>
    ${mayDecide ? null : html`<p class="hint">${t('readonly')}</p>`}
    <${Loaded} load=${pending} rows=${pending.data?.approvals} t=${t} empty=${t('appr.empty')}>
      ${(rows) => html`<table class="list" data-testid="approvals">
        <thead><tr><th>${t('appr.task')}</th><th>${t('appr.text')}</th><th>${t('exec.price')}</th>
          <th>${t('appr.expires')}</th>${mayDecide ? html`<th></th>` : null}</tr></thead>
        <tbody>${rows.map(
          (a) => html`<tr key=${a.id}>
            <td><${TaskName} task=${{ ...a, id: a.task_id, input_preview: null }} t=${t} />
              <br /><small class="hint">${t(`appr.kind.${a.kind}`)}</small></td>
            <td><bdi dir="auto">${a.question ?? a.text_preview}</bdi></td>
            <td><${Fils} fils=${a.price_fils} currency=${a.currency} lang=${lang} /></td>
            <td><${When} iso=${a.expires_at} lang=${lang} /></td>
            ${
              mayDecide
                ? html`<td class="actions">
                  <${ActionButton} label=${t('appr.approve')} busy=${t('appr.working')} t=${t} action=${decide(a.id, 'approve')} />
                  <${ActionButton} label=${t('appr.reject')} busy=${t('appr.working')} t=${t} kind="danger" action=${decide(a.id, 'reject')} />
                </td>`
                : null
            }
          </tr>`,
        )}</tbody>
      </table>
      <${Pager} page=${pending.page} t=${t} lang=${lang} />`}
    <//>`
}

const SCREENS = {
  org: Overview,
  connections: Connections,
  executions: Executions,
  approvals: Approvals,
  usage: Usage,
  members: Members,
  profile: Profile,
  danger: Danger,
}

/** The tenant screen of a route name (the sidebar's Organization group links them); undefined for another name. */
export function tenantScreen(name, props) {
  const Screen = SCREENS[name]
  if (!Screen) return undefined
  return html`<${Screen} ...${props} />`
}
