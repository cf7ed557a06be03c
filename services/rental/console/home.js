// @ts-check
// Home: the organization, the member's role, the wallet and the recent tasks; the signing key.
import { roleName } from './i18n.js'
import { KeyPanel } from './key-panel.js'
import { CopyId, TaskName, TaskState } from './names.js'
import { OnboardingSteps } from './onboarding.js'
import { Empty, ErrorText, html, Loading, useLoad, When } from './ui.js'

/** Tasks as a person reads them: the job (or agent) and the input's first words, state, price, when. */
export function TaskRows({ tasks, t, lang }) {
  return html`<table class="list" data-testid="tasks">
    <thead><tr><th>${t('task.what')}</th><th>${t('task.state')}</th><th>${t('task.price')}</th><th>${t('task.when')}</th></tr></thead>
    <tbody>${tasks.map(
      (task) => html`<tr key=${task.id} data-task=${task.id}>
        <td><${TaskName} task=${task} t=${t} /></td>
        <td><${TaskState} state=${task.state} t=${t} /></td>
        <td><bdi class="money" data-testid="task-price">${task.price.display}</bdi></td>
        <td><${When} iso=${task.created_at} lang=${lang} /></td>
      </tr>`,
    )}</tbody>
  </table>`
}

/** Onboarding's steps still to do, each a link to what completes it; nothing once all are done. */
function ToDo({ t }) {
  const org = useLoad('/v1/org')
  const steps = org.data?.onboarding.steps ?? []
  if (!steps.some((s) => !s.done)) return null
  return html`<section class="card" aria-labelledby="todo-title" data-testid="home-todo">
    <h2 id="todo-title">${t('onb.home_title')}</h2>
    <${OnboardingSteps} steps=${steps} t=${t} onlyTodo=${true} />
  </section>`
}

export function Home({ me, t, lang }) {
  const statement = useLoad(`/api/statements?lang=${lang}`)
  const tasks = useLoad(`/api/tasks?limit=5&lang=${lang}`)
  // the organization's name (its id in small print beside it)
  const org = useLoad('/v1/org')
  const closing = statement.data?.closing
  return html`<h1>${t('home.title')}</h1>
    <section class="card summary" aria-label=${t('organization')}>
      <dl>
        <dt>${t('organization')}</dt>
        <dd>${org.data ? html`<span data-testid="org-name">${org.data.name}</span><br />` : null}<${CopyId} label=${t('organization')} value=${me.organization.id} t=${t} /></dd>
        <dt>${t('role')}</dt><dd>${roleName(me.organization.role, lang)}</dd>
        <dt>${t('wallet')}</dt>
        <dd class="balance" data-testid="wallet">${closing ? html`<bdi>${closing.wallet.display}</bdi>` : '…'}</dd>
        <dt>${t('held')}</dt><dd>${closing ? html`<bdi>${closing.held.display}</bdi>` : '…'}</dd>
      </dl>
      <${ErrorText} error=${statement.error} t=${t} />
    </section>
    <${ToDo} t=${t} />
    <section class="card" aria-labelledby="recent-title">
      <h2 id="recent-title">${t('home.recent')}</h2>
      <${ErrorText} error=${tasks.error} t=${t} />
      ${
        !tasks.data
          ? html`<${Loading} t=${t} />`
          : tasks.data.tasks.length === 0
            ? html`<${Empty}>${t('home.no_tasks')} <a href="#/market">${t('nav.market')}</a><//>`
            : html`<${TaskRows} tasks=${tasks.data.tasks} t=${t} lang=${lang} />`
      }
    </section>
    <${KeyPanel} t=${t} lang=${lang} />`
}
