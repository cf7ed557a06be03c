// @ts-check
// Receipts of a task or an engagement, each checked in this browser (verify.js) against the
// ledger's checkpoint and log key: verified, pending (on its way to the ledger: neutral, checked
// again by itself), or not and why (red only for a check that failed).
import { useEffect, useState } from 'preact/hooks'
import { formatNumber, separator } from './i18n.js'
import { verifyReceipt } from './verify.js'
import { useLoadAgain } from './reload.js'
import { Empty, ErrorText, html, Loading, When } from './ui.js'

/** A receipt type in words, or as it is when the console has no words for it. */
function typeName(type, t) {
  const words = t(`receipt.type.${type}`)
  return words === `receipt.type.${type}` ? type : words
}

/** How often a receipt on its way to the ledger is checked again, and for how long (then by "Check again"). */
const POLL_MS = 2000
const POLLS = 60

/**
 * A receipt the ledger has not taken in yet (the API's `pending`: not delivered, not in the latest
 * checkpoint, the ledger unreachable for now). Any other failure is a check that failed.
 */
export const onItsWay = (receipt) => receipt.pending === true

function Verdict({ verdict, t, waited }) {
  if (!verdict) return html`<span class="loading">${t('receipt.checking')}</span>`
  const failed = verdict.checks.find((c) => !c.ok)
  if (!verdict.ok && failed.check === 'on_ledger' && verdict.pending)
    return html`<span class="receipt-pending" data-verdict="pending" role="status">⧗ ${t(waited ? 'receipt.pending_long' : 'receipt.pending')}</span>`
  return verdict.ok
    ? html`<span class="ok" data-verdict="verified">✓ ${t('receipt.verified')}</span>`
    : html`<span class="error" data-verdict="not-verified">✗ ${t('receipt.not_verified')}:
        ${t(`receipt.check.${failed.check}`)} — <span dir="auto">${failed.detail}</span></span>`
}

const PIN = 'console.log_key'

/**
 * The log key this browser saw first (trust on first use, kept in localStorage): a rental naming
 * another later fails the check instead of vouching for a log of its own choosing.
 */
function pinnedLogKey(key) {
  try {
    const kept = localStorage.getItem(PIN)
    if (!kept && key) localStorage.setItem(PIN, key)
    return kept ?? key
  } catch {
    return undefined
  }
}

function ReceiptRow({ receipt, checkpoint, logKey, t, lang, waited }) {
  const [checked, setChecked] = useState(/** @type {{ of: string, verdict: any } | null} */ (null))
  // the verdict of the receipt as it is now: one of an earlier answer (on its way) is not shown meanwhile
  const now = JSON.stringify([
    receipt.id,
    receipt.ledger_index,
    receipt.pending,
    receipt.proof,
    checkpoint,
    logKey,
  ])
  const verdict = checked?.of === now ? checked.verdict : null
  useEffect(() => {
    const pending = onItsWay(receipt)
    const keep = (result) => setChecked({ of: now, verdict: { ...result, pending } })
    void verifyReceipt(receipt, checkpoint, logKey, pinnedLogKey(logKey)).then(keep, (e) =>
      keep({ ok: false, checks: [{ check: 'signature', ok: false, detail: e.message }] }),
    )
  }, [now])
  return html`<li class="receipt" data-receipt=${receipt.id} data-type=${receipt.type}>
    <div><strong>${typeName(receipt.type, t)}</strong>${separator(lang)}<${When} iso=${receipt.issued_at} lang=${lang} />
      ${receipt.ledger_index !== null ? html`${separator(lang)}${t('receipt.index', { n: formatNumber(receipt.ledger_index, lang) })}` : null}</div>
    <div><${Verdict} verdict=${verdict} t=${t} waited=${waited} /></div>
    <details><summary>${t('receipt.checks')}</summary>
      <ul class="checks">${(verdict?.checks ?? []).map(
        (
          c,
        ) => html`<li key=${c.check} class=${c.ok ? 'ok' : 'error'}>${c.ok ? '✓' : '✗'} ${t(`receipt.check.${c.check}`)}:
          <code dir="ltr">${c.detail}</code></li>`,
      )}</ul>
      <p>${t('receipt.leaf')}: <code dir="ltr" class="hash">${receipt.leaf_hash}</code></p>
    </details>
  </li>`
}

/**
 * The receipts the agent `did` issued for this organization that belong here: those of `taskIds`
 * or `escrowIds` (a task's completion, an escrow's release). Each is checked on its own.
 */
export function Receipts({ did, taskIds = [], escrowIds = [], t, lang, reloadKey = 0 }) {
  const [again, setAgain] = useState(0)
  const list = useLoadAgain(
    `/api/agents/${encodeURIComponent(did)}/receipts?limit=100`,
    `${reloadKey}.${again}`,
  )
  const data = list.data
  const mine = (data?.receipts ?? []).filter(
    (r) => (r.task_id && taskIds.includes(r.task_id)) || (r.escrow_id && escrowIds.includes(r.escrow_id)),
  )
  // a receipt on its way is checked again by itself, every POLL_MS, POLLS times at most
  const [polls, setPolls] = useState(0)
  const waiting = mine.some(onItsWay)
  useEffect(() => {
    if (!waiting || polls >= POLLS) return
    const timer = globalThis.setTimeout(() => {
      setPolls((n) => n + 1)
      setAgain((n) => n + 1)
    }, POLL_MS)
    return () => globalThis.clearTimeout(timer)
  }, [waiting, polls, data])
  return html`<section class="card" aria-labelledby="receipts-title" data-testid="receipts">
    <h2 id="receipts-title">${t('receipt.title')}</h2>
    <p class="hint">${t('receipt.intro')}</p>
    <button type="button" onClick=${() => {
      setPolls(0)
      setAgain((n) => n + 1)
    }}>${t('receipt.again')}</button>
    <${ErrorText} error=${list.error} t=${t} />
    ${
      !data
        ? list.error
          ? null
          : html`<${Loading} t=${t} />`
        : html`${
            data.ledger.reachable
              ? html`<p class="hint">${t('receipt.log_key')}: <code dir="ltr">${data.log_key?.verifier_key}</code></p>`
              : html`<p class="warning" role="alert">${t('receipt.ledger_down')}</p>`
          }
          ${
            mine.length === 0
              ? html`<${Empty}>${t('receipt.empty')}<//>`
              : html`<ul class="receipts">${mine.map(
                  (r) => html`<${ReceiptRow} key=${r.id} receipt=${r} checkpoint=${data.checkpoint?.note}
                    logKey=${data.log_key?.verifier_key} t=${t} lang=${lang} waited=${polls >= POLLS} />`,
                )}</ul>`
          }`
    }
  </section>`
}
