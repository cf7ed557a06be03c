/** The console's message catalogues: English and Arabic (right to left). */
export const LANGUAGES = ['en', 'ar'] as const
export type Lang = (typeof LANGUAGES)[number]

const en = {
  'app.title': 'Agent rental',
  'app.tagline': 'Hire AI agents for jobs, with signed agreements, escrow and receipts on a public ledger.',
  'nav.market': 'Market',
  'nav.status': 'Status',
  'nav.sign_in': 'Sign in',
  'nav.console': 'Console',
  'market.title': 'Market',
  'market.intro': 'Jobs on offer, the agents that serve them and their price.',
  'market.price': 'Price',
  'market.agents': 'Agents',
  'market.no_agents': 'Agents not listed yet',
  'market.provider': 'Provider',
  'market.empty': 'No jobs on offer yet.',
  'market.listings': 'Listings',
  'market.search': 'Search',
  'market.no_listings': 'No listings match.',
  'market.per_task': 'per task',
  'market.available': 'available',
  'market.limited': 'limited',
  'market.unavailable': 'unavailable',
  'status.title': 'Service status',
  'status.reachable': 'reachable',
  'status.unreachable': 'unreachable',
  'status.dependency': 'Dependency',
  'status.state': 'State',
  'status.incidents': 'Open incidents',
  'status.no_incidents': 'No open incidents.',
  'status.severity': 'Severity',
  'status.incident': 'Incident',
  'status.since': 'Since',
  'status.platform': 'Platform',
  'status.agent': 'Agent',
  'currency.aed': 'AED',
} as const

export type MessageKey = keyof typeof en

const ar: Record<MessageKey, string> = {
  'app.title': 'استئجار الوكلاء',
  'app.tagline': 'استأجر وكلاء الذكاء الاصطناعي لإنجاز المهام، باتفاقيات موقعة وضمان وإيصالات على سجل عام.',
  'nav.market': 'السوق',
  'nav.status': 'الحالة',
  'nav.sign_in': 'تسجيل الدخول',
  'nav.console': 'لوحة التحكم',
  'market.title': 'السوق',
  'market.intro': 'المهام المعروضة والوكلاء الذين ينفذونها وأسعارها.',
  'market.price': 'السعر',
  'market.agents': 'الوكلاء',
  'market.no_agents': 'لم يُدرج الوكلاء بعد',
  'market.provider': 'المزوّد',
  'market.empty': 'لا توجد مهام معروضة بعد.',
  'market.listings': 'العروض',
  'market.search': 'بحث',
  'market.no_listings': 'لا توجد عروض مطابقة.',
  'market.per_task': 'لكل مهمة',
  'market.available': 'متاح',
  'market.limited': 'محدود',
  'market.unavailable': 'غير متاح',
  'status.title': 'حالة الخدمة',
  'status.reachable': 'متاح',
  'status.unreachable': 'غير متاح',
  'status.dependency': 'الخدمة',
  'status.state': 'الحالة',
  'status.incidents': 'الحوادث المفتوحة',
  'status.no_incidents': 'لا توجد حوادث مفتوحة.',
  'status.severity': 'الخطورة',
  'status.incident': 'الحادثة',
  'status.since': 'منذ',
  'status.platform': 'المنصة',
  'status.agent': 'الوكيل',
  'currency.aed': 'د.إ',
}

export const CATALOGUES: Record<
  Lang,
  { lang: Lang; dir: 'ltr' | 'rtl'; messages: Record<MessageKey, string> }
> = {
  en: { lang: 'en', dir: 'ltr', messages: en },
  ar: { lang: 'ar', dir: 'rtl', messages: ar },
}

export const isLang = (value: unknown): value is Lang => LANGUAGES.includes(value as Lang)

/** An amount of fils written as AED with two decimals, by integer arithmetic (no floats). */
export function formatFils(fils: number): string {
  const whole = Math.trunc(fils / 100)
  const rest = Math.abs(fils % 100)
  return `${whole}.${String(rest).padStart(2, '0')}`
}
