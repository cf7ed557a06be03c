// Usage this month: spend and tasks per day, drawn from the month's statement as an inline SVG
// (no chart library: the page's policy allows no inline style, so colours come from console.css).
import { formatFils } from './i18n.js'
import { ErrorText, html, Loading, useLoad } from './ui.js'

const W = 720
const H = 240
const PAD = { top: 30, bottom: 28, side: 24 }

/** Per day of the month so far: the money held for tasks (escrow holds) and how many tasks it was for. */
export function dailyUsage(statement, now = new Date()) {
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth()
  const days = now.getUTCDate()
  const rows = Array.from({ length: days }, (_, i) => ({ day: i + 1, fils: 0n, tasks: new Set() }))
  for (const line of statement.movements) {
    if (line.kind !== 'escrow_hold') continue
    const at = new Date(line.at)
    if (at.getUTCFullYear() !== year || at.getUTCMonth() !== month) continue
    const row = rows[at.getUTCDate() - 1]
    if (!row) continue
    const amount = BigInt(line.wallet.amount_fils)
    row.fils += amount < 0n ? -amount : amount
    row.tasks.add(line.task_id ?? line.escrow_id ?? line.transfer_id)
  }
  return rows.map((r) => ({ day: r.day, fils: r.fils, tasks: r.tasks.size }))
}

function Chart({ days, t, lang, month }) {
  const maxFils = days.reduce((m, d) => (d.fils > m ? d.fils : m), 1n)
  const maxTasks = Math.max(1, ...days.map((d) => d.tasks))
  const inner = { w: W - 2 * PAD.side, h: H - PAD.top - PAD.bottom }
  const step = inner.w / days.length
  // in Arabic the days run right to left, as the page reads
  const rtl = lang === 'ar'
  const at = (i) => PAD.side + (rtl ? days.length - 1 - i : i) * step
  const barW = Math.max(2, step * 0.6)
  // the bars' heights in the SVG's units; BigInt ratio kept exact before the last division
  const barH = (fils) => (Number((fils * 1000n) / maxFils) / 1000) * inner.h
  const y = (h) => PAD.top + inner.h - h
  const points = days.map((d, i) => `${at(i) + step / 2},${y((d.tasks / maxTasks) * inner.h)}`).join(' ')
  const number = new Intl.NumberFormat(lang === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE')
  const label = t('usage.chart', { month })
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-labelledby="usage-chart-title" data-testid="usage-chart"
      direction="ltr">
      <title id="usage-chart-title">${label}</title>
      <line class="axis" x1=${PAD.side} y1=${y(0)} x2=${W - PAD.side} y2=${y(0)} />
      <text class="tick" x=${rtl ? W - PAD.side : PAD.side} y="14" text-anchor=${rtl ? 'end' : 'start'}>${t('usage.spend')}: ${formatFils(maxFils, 'AED', lang)}</text>
      <text class="tick" x=${rtl ? PAD.side : W - PAD.side} y="14" text-anchor=${rtl ? 'start' : 'end'}>${t('usage.tasks')}: ${number.format(maxTasks)}</text>
      ${days.map(
        (d, i) => html`<g key=${d.day} data-day=${d.day}>
          <rect class="bar-spend" x=${at(i) + (step - barW) / 2} y=${y(barH(d.fils))}
            width=${barW} height=${barH(d.fils)}>
            <title>${t('usage.day', { day: number.format(d.day), spend: formatFils(d.fils, 'AED', lang), tasks: number.format(d.tasks) })}</title>
          </rect>
          ${
            d.day === 1 || d.day % 5 === 0
              ? html`<text class="tick" x=${at(i) + step / 2} y=${H - 8} text-anchor="middle">${number.format(d.day)}</text>`
              : null
          }
        </g>`,
      )}
      <polyline class="line-tasks" points=${points} fill="none" />
      ${days.map(
        (d, i) =>
          html`<circle key=${`c${d.day}`} class="dot-tasks" r="3" cx=${at(i) + step / 2}
            cy=${y((d.tasks / maxTasks) * inner.h)} />`,
      )}
    </svg>
    <figcaption>
      <span class="legend legend-spend">${t('usage.spend')}</span>
      <span class="legend legend-tasks">${t('usage.tasks')}</span>
    </figcaption>
  </figure>`
}

export function Usage({ t, lang }) {
  const statement = useLoad(`/api/statements?lang=${lang}`)
  const now = new Date()
  const month = new Intl.DateTimeFormat(lang === 'ar' ? 'ar-AE' : 'en-AE', {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(now)
  const days = statement.data ? dailyUsage(statement.data, now) : null
  const total = days?.reduce((s, d) => s + d.fils, 0n) ?? 0n
  const tasks = days?.reduce((s, d) => s + d.tasks, 0) ?? 0
  return html`<h1>${t('usage.title')}</h1>
    <${ErrorText} error=${statement.error} t=${t} />
    ${
      !days
        ? statement.error
          ? null
          : html`<${Loading} t=${t} />`
        : html`<section class="card">
            <${Chart} days=${days} t=${t} lang=${lang} month=${month} />
            ${
              total === 0n
                ? html`<p class="empty">${t('usage.empty')}</p>`
                : html`<p data-testid="usage-total">${t('usage.total', { spend: formatFils(total, 'AED', lang), tasks: new Intl.NumberFormat(lang === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE').format(tasks) })}</p>`
            }
            <p class="hint">${t('usage.source')}</p>
          </section>`
    }`
}
