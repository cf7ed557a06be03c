// @ts-check
// Teams with their terms and, for each team task, its delegation chain as a read-only tree.
import { formatNumber, separator } from './i18n.js'
import { Pager, usePaged } from './paging.js'
import { AgentName, CopyId, dotted } from './names.js'
import { Empty, ErrorText, Fils, html, Loading, StateBadge, useLoad, When, listBody } from './ui.js'

const percent = (bps, lang) =>
  formatNumber(bps / 10_000, lang, { style: 'percent', maximumFractionDigits: 2 })

export function Teams({ t, lang }) {
  const list = usePaged('/api/teams', { field: 'teams' })
  const rows = list.data?.teams
  return html`<h1>${t('nav.teams')}</h1>
    <${ErrorText} error=${list.error} t=${t} />
    ${
      rows && rows.length === 0
        ? html`<${Empty}>${t('ctl.teams_empty')} <a href="#/market">${t('nav.market')}</a><//>`
        : listBody(
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
          )
    }`
}

/**
 * The catalogue's agents by DID, for naming a team's lead, members and hops (an agent the catalogue
 * does not list keeps its DID, behind a copy button).
 * @param {string} lang
 * @returns {Map<string, string>}
 */
function useAgentNames(lang) {
  const jobs = useLoad(`/api/jobs?lang=${lang}`)
  const names = new Map()
  for (const job of jobs.data?.jobs ?? []) for (const agent of job.agents) names.set(agent.did, agent.name)
  return names
}

/** One hop of a chain and the hops it delegated to, nested: its agent, state, cost and signature on one line, its receipt's hash short behind a copy button. */
function Hop({ node, t, lang, names }) {
  const facts = dotted(
    [
      html`<span class=${`state state-${node.state}`}>${t(`hop.${node.state}`)}</span>`,
      node.cost_fils > 0 ? html`<${Fils} fils=${node.cost_fils} lang=${lang} />` : null,
      node.signature_verified === true ? html`<span class="ok">✓ ${t('chain.signed')}</span>` : null,
      node.signature_verified === false
        ? html`<span class="error">✗ ${t('chain.bad_signature')}</span>`
        : null,
      node.refusal ? html`<span class="error">${t(`refusal.${node.refusal}`)}</span>` : null,
    ],
    lang,
  )
  return html`<li data-hop=${node.hop_id}>
    <div class="hop"><${AgentName} name=${names.get(node.agent_did)} did=${node.agent_did} t=${t}> ${facts}<//>${
      node.receipt
        ? html` <${CopyId} label=${t('hop.receipt')} value=${node.receipt.leaf_hash} t=${t} short=${true} />`
        : null
    }</div>
    ${node.children.length > 0 ? html`<ul class="tree">${node.children.map((c) => html`<${Hop} key=${c.hop_id} node=${c} t=${t} lang=${lang} names=${names} />`)}</ul>` : null}
  </li>`
}

function Chain({ team, taskId, t, lang, names }) {
  const chain = useLoad(`/api/teams/${encodeURIComponent(team)}/tasks/${encodeURIComponent(taskId)}/chain`)
  if (chain.error) return html`<${ErrorText} error=${chain.error} t=${t} />`
  if (!chain.data) return html`<${Loading} t=${t} />`
  return html`<ul class="tree" aria-label=${t('chain.title')}><${Hop} node=${chain.data.root} t=${t} lang=${lang} names=${names} /></ul>`
}

export function Team({ id, t, lang }) {
  const team = useLoad(`/api/teams/${encodeURIComponent(id)}`)
  const tasks = useLoad(`/api/tasks?limit=100&lang=${lang}`)
  const names = useAgentNames(lang)
  const d = team.data
  if (team.error && !d) return html`<${ErrorText} error=${team.error} t=${t} />`
  if (!d) return html`<${Loading} t=${t} />`
  const mine = (tasks.data?.tasks ?? []).filter((x) => d.engagement_id && x.engagement_id === d.engagement_id)
  return html`<p><a href="#/teams"><span class="back-arrow" aria-hidden="true">←</span> ${t('nav.teams')}</a></p>
    <h1 dir="auto">${d.name}</h1>
    <section class="card"><dl>
      <dt>${t('col.state')}</dt><dd>${t(`team.${d.state}`)}</dd>
      <dt>${t('teams.lead')}</dt><dd><${AgentName} name=${names.get(d.lead_did)} did=${d.lead_did} t=${t} /></dd>
      <dt>${t('teams.budget')}</dt><dd><${Fils} fils=${d.terms.task_budget_fils} lang=${lang} /></dd>
      <dt>${t('teams.depth')}</dt><dd>${formatNumber(d.terms.max_depth, lang)}</dd>
      ${d.engagement_id ? html`<dt>${t('teams.engagement')}</dt><dd><a href=${`#/engagements/${d.engagement_id}`}>${t('teams.open_engagement')}</a></dd>` : null}
    </dl>
    <h2>${t('teams.members')}</h2>
    <ul>${d.terms.members.map(
      (m) =>
        html`<li key=${m.agent_did} data-member=${m.agent_did}><${AgentName} name=${names.get(m.agent_did)} did=${m.agent_did} t=${t}>${[
          separator(lang),
          ...dotted(
            [
              html`<span class="share">${t('teams.share', { share: percent(m.share_bps, lang) })}</span>`,
              html`<span>${t('teams.hop_cost')} <${Fils} fils=${m.hop_fils} lang=${lang} /></span>`,
            ],
            lang,
          ),
        ]}<//></li>`,
    )}</ul></section>
    <section class="card" aria-labelledby="chains-title"><h2 id="chains-title">${t('chain.title')}</h2>
      ${
        mine.length === 0
          ? html`<${Empty}>${t('teams.no_tasks')}<//>`
          : mine.map(
              // the summary is a control itself: a link to the task stands inside the details (axe: nested-interactive)
              (
                task,
              ) => html`<details key=${task.id}><summary><bdi>${task.job_title ?? task.agent_name ?? t('task.untitled')}</bdi> <${StateBadge} state=${task.state} t=${t} /> <${When} iso=${task.created_at} lang=${lang} /></summary>
                <p><a href=${`#/tasks/${task.id}`}>${t('teams.open_task')}</a></p>
                <${Chain} team=${d.id} taskId=${task.id} t=${t} lang=${lang} names=${names} /></details>`,
            )
      }
    </section>`
}
