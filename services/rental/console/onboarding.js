// @ts-check
// Onboarding: the organization's steps, each linked to the part of the Onboarding screen that
// completes it (home.js shows the steps still to do). The screen submits the business check,
// shows what the domain must publish (and checks it again), says who decides the review, and
// screens an agent the organization has hired.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { say } from './toast.js'
import { CopyId } from './names.js'
import { ActionButton, allowed, ErrorText, html, Loading, useLoad, When } from './ui.js'
import { separator } from './i18n.js'

/** Each step, and the part of the screen that completes it (#/onboarding/<part>). */
export const STEP_PARTS = {
  business_check_submitted: 'business',
  domain_verified: 'domain',
  business_check_approved: 'review',
  agent_screened: 'screening',
}

/** The steps as a list: each to-do step a link to what completes it. */
export function OnboardingSteps({ steps, t, onlyTodo = false }) {
  const shown = onlyTodo ? steps.filter((s) => !s.done) : steps
  return html`<ul class="steps" data-testid="onboarding-steps">${shown.map(
    (s) => html`<li key=${s.name} class=${s.done ? 'done' : 'todo'} data-step=${s.name}>
      ${
        s.done
          ? html`${t(`step.${s.name}`)}: ${t('step.done')}`
          : html`<a href=${`#/onboarding/${STEP_PARTS[s.name] ?? 'business'}`}>${t(`onb.todo.${s.name}`)}</a>`
      }</li>`,
  )}</ul>`
}

const Part = ({ id, title, children, focus }) => {
  useEffect(() => {
    if (focus !== id) return
    const heading = document.getElementById(`onb-${id}`)
    heading?.scrollIntoView({ block: 'start' })
    heading?.focus()
  }, [focus])
  return html`<section class="card" aria-labelledby=${`onb-${id}`} data-part=${id}>
    <h2 id=${`onb-${id}`} tabindex="-1">${title}</h2>${children}</section>`
}

const EMPTY_BUSINESS = { domain: '', entity_name: '', jurisdiction: '', registration: '' }

function BusinessForm({ kyb, t, done }) {
  const [f, setF] = useState(() =>
    kyb
      ? {
          domain: kyb.domain,
          entity_name: kyb.entity_name,
          jurisdiction: kyb.jurisdiction,
          registration: kyb.registration,
        }
      : EMPTY_BUSINESS,
  )
  const fields = useFieldProblems()
  const submit = async () => {
    fields.check({
      'onb-domain': /^[^\s/]+\.[^\s/]{2,}$/.test(f.domain.trim()) ? null : t('onb.domain_rule'),
      'onb-entity_name': f.entity_name.trim() ? null : t('field.required'),
      'onb-jurisdiction': f.jurisdiction.trim() ? null : t('field.required'),
      'onb-registration': f.registration.trim() ? null : t('field.required'),
    })
    const answer = await api('POST', '/api/onboarding/kyb', {
      domain: f.domain.trim(),
      entity_name: f.entity_name.trim(),
      jurisdiction: f.jurisdiction.trim(),
      registration: f.registration.trim(),
    })
    say(t(answer.domain_verified ? 'onb.sent_verified' : 'onb.sent_waiting'))
    await done()
  }
  const input = (name, extra = {}) => html`<label for=${`onb-${name}`}>${t(`onb.${name}`)}</label>
    <input id=${`onb-${name}`} value=${f[name]} ...${extra} ...${fields.at(`onb-${name}`)}
      onInput=${(e) => setF({ ...f, [name]: e.currentTarget.value })} />${fields.note(`onb-${name}`)}`
  return html`<form class="form" novalidate onSubmit=${(e) => e.preventDefault()} data-testid="business-form">
    ${input('entity_name')}${input('domain', { dir: 'ltr' })}${input('jurisdiction')}${input('registration', { dir: 'ltr' })}
    <${ActionButton} kind="primary" t=${t} busy=${t('loading')} action=${submit}
      label=${t(kyb ? 'onb.check_again' : 'onb.submit')} />
  </form>`
}

function Screening({ kya, t, lang, done }) {
  const engagements = useLoad('/api/engagements?limit=50')
  // each agent hired, named by its job (its DID in small print where it is listed)
  const agents = [
    ...new Map(
      (engagements.data?.engagements ?? []).map((e) => [
        e.agent_did,
        e.agent_name ?? e.job_title ?? e.job_id,
      ]),
    ),
  ]
  const [agent, setAgent] = useState('')
  const screen = async () => {
    if (!agent) throw new Error(t('onb.pick_agent'))
    const answer = await api('POST', `/api/onboarding/kya/${encodeURIComponent(agent)}`, {})
    say(t(answer.ok ? 'onb.screened_ok' : 'onb.screened_hits'))
    await done()
  }
  return html`${
    kya.length
      ? html`<ul>${kya
          .slice(0, 5)
          .map(
            (k) =>
              html`<li key=${k.id}><${CopyId} label=${t('task.agent_did')} value=${k.agent_did} t=${t} />${separator(lang)}${t(k.ok ? 'onb.clear' : 'onb.hits')}${separator(lang)}<${When} iso=${k.created_at} lang=${lang} /></li>`,
          )}</ul>`
      : null
  }
    ${
      engagements.data && agents.length === 0
        ? html`<p>${t('onb.no_agents')} <a href="#/market">${t('nav.market')}</a></p>`
        : html`<form class="form inline" onSubmit=${(e) => e.preventDefault()}>
            <label for="onb-agent">${t('onb.agent')}</label>
            <select id="onb-agent" value=${agent} onChange=${(e) => setAgent(e.currentTarget.value)}>
              <option value="">—</option>
              ${agents.map(([did, name]) => html`<option key=${did} value=${did}>${name}</option>`)}
            </select>
            <${ActionButton} kind="primary" t=${t} busy=${t('loading')} action=${screen} label=${t('onb.screen')} />
          </form>`
    }`
}

export function Onboarding({ me, t, lang, id }) {
  const status = useLoad('/api/onboarding')
  const s = status.data
  const mayWrite = allowed(me, 'onboarding:write')
  if (status.error && !s) return html`<h1>${t('onb.title')}</h1><${ErrorText} error=${status.error} t=${t} />`
  if (!s) return html`<h1>${t('onb.title')}</h1><${Loading} t=${t} />`
  const kyb = s.kyb
  return html`<h1>${t('onb.title')}</h1>
    <p>${t(s.kyb_required ? 'onboarding.required' : 'onb.intro')}</p>
    ${mayWrite ? null : html`<p class="hint">${t('readonly')}</p>`}
    <${Part} id="business" focus=${id} title=${t('step.business_check_submitted')}>
      ${kyb ? html`<p>${t('onb.state')}: <strong>${t(`onb.kyb.${kyb.state}`)}</strong></p>` : html`<p>${t('onb.business_why')}</p>`}
      ${mayWrite && (!kyb || kyb.state === 'awaiting_domain' || kyb.state === 'rejected') ? html`<${BusinessForm} kyb=${kyb} t=${t} done=${status.reload} />` : null}
    <//>
    <${Part} id="domain" focus=${id} title=${t('step.domain_verified')}>
      ${
        !kyb
          ? html`<p>${t('onb.domain_first')} <a href="#/onboarding/business">${t('onb.todo.business_check_submitted')}</a></p>`
          : kyb.domain_verified
            ? html`<p class="ok">✓ ${t('onb.domain_ok', { domain: kyb.domain })}</p>`
            : html`<p>${t('onb.publish', { domain: kyb.domain })}</p>
                ${kyb.publish_at ? html`<p><code dir="ltr">${kyb.publish_at}</code></p>` : null}
                ${kyb.owner_document ? html`<pre dir="ltr" class="owner-document">${JSON.stringify(kyb.owner_document, null, 2)}</pre>` : null}
                ${kyb.problems.length ? html`<p class="hint">${t('onb.not_yet')}</p>` : null}
                <p>${t('onb.then_check')}</p>`
      }
    <//>
    <${Part} id="review" focus=${id} title=${t('step.business_check_approved')}>
      <p>${s.kyb_approved ? html`<span class="ok">✓ ${t('onb.approved')}</span>` : t(kyb?.state === 'rejected' ? 'onb.rejected' : 'onb.review_who')}</p>
    <//>
    <${Part} id="screening" focus=${id} title=${t('step.agent_screened')}>
      <p>${t('onb.screening_why')}</p>
      ${mayWrite ? html`<${Screening} kya=${s.kya} t=${t} lang=${lang} done=${status.reload} />` : null}
    <//>`
}
