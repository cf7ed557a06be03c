// @ts-check
// The wallet: its balance, what is held in escrow for running tasks, the latest statement lines,
// and "Add funds". Here that is a demo top-up (money from the platform's funding account, labelled
// demo money) where the deployment has one; in production the action is hidden until a funding
// provider is configured, and the screen says so.
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { filsOf } from './disputes.js'
import { useFieldProblems } from './field-check.js'
import { useLoadAgain } from './reload.js'
import { say } from './toast.js'
import { ActionButton, Empty, ErrorText, html, Loading, When } from './ui.js'

const money = (m) => html`<bdi class="money">${m.display}</bdi>`

/** A new key for each top-up the person means; a retry of the same one (a lost answer) reuses it. */
const newKey = () => globalThis.crypto.randomUUID()

function AddFunds({ wallet, t, lang, onAdded }) {
  const [amount, setAmount] = useState('')
  const [key, setKey] = useState(newKey)
  const fields = useFieldProblems()
  const max = wallet.funding.max_top_up
  const add = async () => {
    const fils = filsOf(amount)
    fields.check({
      'top-up-amount':
        fils === null || fils <= 0
          ? t('wallet.amount_invalid')
          : fils > max.amount_fils
            ? t('wallet.amount_over', { max: max.display })
            : null,
    })
    const added = await api(
      'POST',
      `/api/wallet/top-ups?lang=${lang}`,
      { amount_fils: fils },
      { 'idempotency-key': key },
    )
    setAmount('')
    setKey(newKey())
    say(t('wallet.added', { amount: added.amount.display, balance: added.balance.display }))
    onAdded()
  }
  return html`<form class="form card" data-testid="add-funds" aria-labelledby="add-funds-title" novalidate
    onSubmit=${(e) => e.preventDefault()}>
    <h2 id="add-funds-title">${t('wallet.add')} <span class="badge demo">${t('wallet.demo_badge')}</span></h2>
    <p class="hint">${t('wallet.demo_explained', { max: max.display })}</p>
    <label for="top-up-amount">${t('wallet.amount')}</label>
    <input id="top-up-amount" inputmode="decimal" dir="ltr" size="10" value=${amount} ...${fields.at('top-up-amount')}
      onInput=${(e) => setAmount(e.currentTarget.value)} />
    ${fields.note('top-up-amount')}
    <${ActionButton} kind="primary" label=${t('wallet.add_demo')} busy=${t('wallet.adding')} t=${t} action=${add} />
  </form>`
}

export function Wallet({ t, lang }) {
  const [added, setAdded] = useState(0)
  const wallet = useLoadAgain(`/api/wallet?lang=${lang}`, added)
  const statement = useLoadAgain(`/api/statements?lang=${lang}`, added)
  const w = wallet.data
  const s = statement.data
  const lines = s ? s.movements.slice(-8).reverse() : null
  return html`<h1>${t('wallet.title')}</h1>
    <${ErrorText} error=${wallet.error ?? statement.error} t=${t} />
    ${
      !w || !s
        ? wallet.error || statement.error
          ? null
          : html`<${Loading} t=${t} />`
        : html`<section class="card summary" aria-label=${t('wallet.title')} data-testid="wallet-summary">
            <dl>
              <dt>${t('wallet.balance')}</dt><dd class="balance" data-testid="wallet-balance">${money(w.balance)}</dd>
              <dt>${t('wallet.held')}</dt><dd data-testid="wallet-held">${money(s.closing.held)}</dd>
            </dl>
            <p class="hint">${t('wallet.held_explained')}</p>
          </section>
          ${
            w.funding.mode === 'demo'
              ? html`<${AddFunds} wallet=${w} t=${t} lang=${lang} onAdded=${() => setAdded((n) => n + 1)} />`
              : html`<section class="card" data-testid="no-funding"><h2>${t('wallet.add')}</h2>
                  <p>${t('wallet.no_provider')}</p></section>`
          }
          <section class="card" aria-labelledby="wallet-lines-title">
            <h2 id="wallet-lines-title">${t('wallet.recent')}</h2>
            ${
              lines.length === 0
                ? html`<${Empty}>${w.funding.mode === 'demo' ? t('wallet.no_lines_demo') : t('wallet.no_lines')}<//>`
                : html`<table class="list" data-testid="wallet-lines"><thead><tr><th>${t('statement.at')}</th>
                    <th>${t('statement.kind')}</th><th>${t('wallet')}</th><th>${t('held')}</th></tr></thead>
                  <tbody>${lines.map(
                    (
                      m,
                      i,
                    ) => html`<tr key=${`${m.transfer_id}-${i}`}><td><${When} iso=${m.at} lang=${lang} /></td>
                      <td>${t(`statement.kind.${m.kind}`)}${m.transfer_kind === 'wallet_funding' ? html` <span class="badge demo">${t('wallet.demo_badge')}</span>` : null}</td>
                      <td>${money(m.wallet)}</td><td>${money(m.held)}</td></tr>`,
                  )}</tbody></table>`
            }
            <p><a href="#/statements">${t('wallet.all_statements')}</a></p>
          </section>`
    }`
}
