// @ts-check
// Usage this month: spend and tasks per day from GET /api/usage (the same query as the Overview's
// counts, so the two agree), drawn as an inline SVG (no chart library: the page's policy allows no
// inline style, so colours come from console.css).
import { formatFils } from './i18n.js'
import { ErrorText, html, Loading, useLoad } from './ui.js'

const W = 720
const H = 240
const PAD = { top: 30, bottom: 28, side: 24 }

/** Per day of the month so far: the tasks created that day and their prices (GET /api/usage's days, UTC). */
export function dailyUsage(usage, now = new Date()) {
  const days = now.getUTCDate()
  const rows = Array.from({ length: days }, (_, i) => ({ day: i + 1, fils: 0n, tasks: 0 }))
  for (const d of usage.days) {
    const row = rows[Number(d.day.slice(8, 10)) - 1]
    if (!row) continue
    row.fils += BigInt(d.spend_fils)
    row.tasks += d.tasks
  }
  return rows
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
      <text class="tick" x=${rtl ? W - PAD.side : PAD.side} y="14" text-anchor=${rtl ? 'end' : 'start'}>${t('usage.spend_prices')}: ${formatFils(maxFils, 'AED', lang)}</text>
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
      <span class="legend legend-spend">${t('usage.spend_prices')}</span>
      <span class="legend legend-tasks">${t('usage.tasks')}</span>
    </figcaption>
  </figure>`
}

export function Usage({ t, lang }) {
  const usage = useLoad(`/api/usage?lang=${lang}`)
  const now = new Date()
  const month = new Intl.DateTimeFormat(lang === 'ar' ? 'ar-AE' : 'en-AE', {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(now)
  const data = usage.data
  const days = data ? dailyUsage(data, now) : null
  if (!data || !days)
    return html`<h1>${t('usage.title')}</h1>
      <${ErrorText} error=${usage.error} t=${t} />
      ${usage.error ? null : html`<${Loading} t=${t} />`}`
  return html`<h1>${t('usage.title')}</h1>
    <${ErrorText} error=${usage.error} t=${t} />
    <section class="card">
            <${Chart} days=${days} t=${t} lang=${lang} month=${month} />
            ${
              data.tasks === 0
                ? html`<p class="empty">${t('usage.empty')}</p>`
                : html`<p data-testid="usage-total" data-tasks=${data.tasks} data-fils=${data.spend.amount_fils}>${t('usage.total', { spend: data.spend.display, tasks: new Intl.NumberFormat(lang === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE').format(data.tasks) })}</p>`
            }
            <p class="hint">${t('usage.same_as_overview')}</p>
          </section>`
}
