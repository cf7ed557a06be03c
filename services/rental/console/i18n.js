// The console's words in English and Arabic, the person's language (remembered), and how amounts
// and dates are written for it.
import { CLIENT_EN } from './i18n-client.js'
import { CLIENT_AR } from './i18n-client-ar.js'

import { MARKET_AR, MARKET_EN } from './i18n-market.js'
import { TENANT_AR, TENANT_EN } from './i18n-tenant.js'

const en = {
  title: 'Console',
  loading: 'Loading…',
  'nav.home': 'Home',
  'nav.market': 'Market',
  'nav.engagements': 'Engagements',
  'nav.tasks': 'Tasks',
  'nav.public': 'Public site',
  'nav.main': 'Console sections',
  language: 'Language',
  sign_out: 'Sign out',
  signing_out: 'Signing out…',
  'home.title': 'Home',
  organization: 'Organization',
  role: 'Role',
  wallet: 'Wallet balance',
  held: 'Held in escrow',
  'home.recent': 'Recent tasks',
  'home.no_tasks': 'No tasks yet. Hire an agent in the Market, then run a task from its engagement.',
  'key.title': 'Your signing key',
  'key.where':
    'Made in this browser with WebCrypto (Ed25519), kept in its IndexedDB, its private half not extractable: it never leaves this browser unencrypted.',
  'key.none':
    'This browser holds no signing key yet. Make one with a backup now (recommended); otherwise one is made, without a backup, the first time you hire.',
  'key.make': 'Make my key without a backup',
  'key.without_backup': 'Or, if you accept losing it with this browser’s data:',
  'key.backup_intro':
    'Choose a passphrase of at least {n} characters. The key’s backup is a file encrypted with it; keep both apart. A key can be backed up only when it is made.',
  'key.passphrase': 'Passphrase',
  'key.passphrase_again': 'The passphrase again',
  'key.make_backed_up': 'Make my key with a backup',
  'key.backed_up': 'Backed up when it was made:',
  'key.no_backup':
    'This key has no backup: it lives only in this browser. If this browser’s data is cleared, you can no longer sign releases for the engagements it signed. Keys can be backed up only as they are made.',
  'key.backup_ready': 'Your key is made and kept here. Download its backup now and keep it somewhere safe:',
  'key.backup_download': 'Download the backup',
  'key.restore': 'Restore a key from its backup',
  'key.restore_replaces':
    'Restoring replaces the key this browser holds: unless it has a backup, it is lost.',
  'key.backup_file': 'Backup file',
  'key.restore_button': 'Restore the key',
  'key.error.passphrase_short': 'The passphrase is too short: use at least 12 characters.',
  'key.error.passphrase_mismatch': 'The two passphrases differ: type the same one twice.',
  'key.error.backup_missing': 'Choose the backup file first.',
  'key.error.backup_invalid': 'This file is not a backup of a signing key from this console.',
  'key.error.backup_passphrase': 'The passphrase does not open this backup: check it and try again.',
  'key.error.unsupported': 'This browser could not make the key (WebCrypto Ed25519 or IndexedDB is missing).',
  'key.unsupported':
    'This browser cannot keep a signing key (it lacks WebCrypto Ed25519 or IndexedDB): hiring needs another browser.',
  'market.title': 'Market',
  'market.intro': 'Jobs on offer and the agents that serve them. Hiring signs the agreement with your key.',
  'market.empty': 'No jobs on offer yet. Come back when the catalogue has imported its agents.',
  'market.no_agents': 'No agent serves this job yet.',
  'market.per_task': 'per task',
  'market.hire': 'Hire {agent}',
  'market.hiring': 'Hiring…',
  'market.listings': 'Listings',
  'market.no_listings': 'No provider has published a listing yet.',
  'eng.title': 'Engagements',
  'eng.empty': 'No engagements yet. Hire an agent in the Market.',
  'eng.state.pending': 'waiting for your signature',
  'eng.state.active': 'active',
  'eng.job': 'Job',
  'eng.agent': 'Agent',
  'eng.client_key': 'Client key',
  'eng.price': 'Price',
  'eng.created': 'Hired',
  'eng.state': 'State',
  'eng.escrows': 'Escrows',
  'eng.open': 'Open',
  'sign.title': 'What you sign',
  'sign.intro':
    'Your browser signs these bodies with your key: the exact bytes are their JCS (RFC 8785) canonical form, whose SHA-256 is shown.',
  'sign.sla': 'Service agreement (SLA)',
  'sign.escrow': 'Escrow {n}',
  'sign.bytes': 'Canonical bytes (JCS)',
  'sign.hash': 'SHA-256 computed in this browser',
  'sign.hash_ok': 'equals the hash the rental gave',
  'sign.hash_bad': 'differs from the hash the rental gave ({hash}): do not sign',
  'sign.button': 'Sign the agreement and the escrow',
  'sign.signing': 'Signing…',
  'sign.other_key':
    'This engagement names the client key {did}; this browser holds {mine}. Only the browser holding that key can sign it.',
  'sign.done': 'Signed: the engagement is active.',
  'task.new': 'New task',
  'task.text': 'What should the agent do?',
  'task.run': 'Run the task',
  'task.running': 'Starting…',
  'task.need_active': 'Sign the engagement first: a task runs on an active engagement.',
  'tasks.title': 'Tasks',
  'tasks.empty': 'No tasks yet. Open an active engagement and run a task.',
  'task.title': 'Task',
  'task.state': 'State',
  'task.events': 'Progress',
  'task.live': 'live',
  'task.no_events': 'No events yet.',
  'task.output': 'Output',
  'task.no_output': 'No output yet.',
  'task.output_expired': 'The output is no longer kept; the receipt and its hashes stay.',
  'task.error': 'Error',
  'task.cancel': 'Cancel the task',
  'task.retry': 'Retry the task',
  'task.receipt': 'Receipt',
  'task.created': 'Created',
  'state.submitted': 'submitted',
  'state.working': 'working',
  'state.input_required': 'waiting for input',
  'state.completed': 'completed',
  'state.failed': 'failed',
  'state.canceled': 'canceled',
  'state.rejected': 'rejected',
  'state.pending_approval': 'waiting for approval',
  'state.approved': 'approved',
  'state.running': 'running',
  'state.timed_out': 'timed out',
  'state.refused': 'refused',
  'event.task.created': 'Task created',
  'event.task.trace': 'Agent reported',
  'event.task.state_changed': 'State: {from} → {to}',
  'error.network': 'The rental could not be reached. Check your connection and try again.',
  'error.signed_out': 'Your session has ended. Sign in again.',
  not_found: 'Nothing here. Choose a section above.',
  back: 'Back',
  'nav.budgets': 'Budgets',
  'nav.invoices': 'Invoices',
  'nav.refunds': 'Refunds',
  'nav.schedules': 'Schedules',
  'nav.webhooks': 'Webhooks',
  'col.name': 'Name',
  'col.limit': 'Limit',
  'col.spent': 'Spent',
  'col.left': 'Left',
  'col.period': 'Period',
  'col.number': 'Number',
  'col.issued': 'Issued',
  'col.total': 'Total',
  'col.state': 'State',
  'col.document': 'Document',
  'col.created': 'Created',
  'col.amount': 'Amount',
  'col.reason': 'Reason',
  'col.cron': 'When',
  'col.next': 'Next run',
  'col.task': 'Last task',
  'col.url': 'Address',
  'col.events': 'Events',
  'budgets.empty':
    'No budgets. Set one with POST /api/budgets to cap what the organization commits each month.',
  'budgets.scope.organization': 'Whole organization',
  'budgets.scope.engagement': 'One engagement',
  'budgets.scope.agent': 'One agent',
  'invoices.empty': 'No invoices yet. Released payments are invoiced with POST /api/invoices.',
  'invoice.issued': 'issued',
  'invoice.paid': 'paid',
  'invoice.pdf': 'PDF',
  'refunds.empty': 'No refunds. A released payment can be refunded with POST /api/refunds.',
  'refund.requested': 'requested',
  'refund.accepted': 'accepted',
  'refund.settled': 'settled',
  'refund.rejected': 'rejected',
  'schedules.empty': 'No schedules. Run tasks on a timetable with POST /api/schedules.',
  'schedule.active': 'active',
  'schedule.paused': 'paused',
  'webhooks.empty': 'No webhooks. Subscribe an https address to events with POST /api/webhooks.',
  'role.owner': 'owner',
  'role.admin': 'admin',
  'role.member': 'member',
  'role.billing': 'billing',
  'role.viewer': 'viewer',
  // the client screens' words
  ...CLIENT_EN,
}

const ar = {
  title: 'لوحة التحكم',
  loading: 'جارٍ التحميل…',
  'nav.home': 'الرئيسية',
  'nav.market': 'السوق',
  'nav.engagements': 'التعاقدات',
  'nav.tasks': 'المهام',
  'nav.public': 'الموقع العام',
  'nav.main': 'أقسام لوحة التحكم',
  language: 'اللغة',
  sign_out: 'تسجيل الخروج',
  signing_out: 'جارٍ تسجيل الخروج…',
  'home.title': 'الرئيسية',
  organization: 'المؤسسة',
  role: 'الدور',
  wallet: 'رصيد المحفظة',
  held: 'المحجوز في الضمان',
  'home.recent': 'أحدث المهام',
  'home.no_tasks': 'لا توجد مهام بعد. استأجر وكيلاً من السوق، ثم شغّل مهمة من تعاقده.',
  'key.title': 'مفتاح التوقيع الخاص بك',
  'key.where':
    'أُنشئ في هذا المتصفح عبر WebCrypto (Ed25519) ويُحفظ في IndexedDB، ونصفه الخاص غير قابل للاستخراج: لا يغادر هذا المتصفح دون تشفير.',
  'key.none':
    'لا يحمل هذا المتصفح مفتاح توقيع بعد. أنشئ مفتاحاً مع نسخة احتياطية الآن (موصى به)، وإلا يُنشأ مفتاح بلا نسخة احتياطية عند أول استئجار.',
  'key.make': 'أنشئ مفتاحي بلا نسخة احتياطية',
  'key.without_backup': 'أو، إن قبلت فقدانه مع بيانات هذا المتصفح:',
  'key.backup_intro':
    'اختر عبارة مرور من {n} حرفاً على الأقل. النسخة الاحتياطية للمفتاح ملف مشفّر بها؛ احفظهما منفصلين. لا يمكن نسخ المفتاح احتياطياً إلا عند إنشائه.',
  'key.passphrase': 'عبارة المرور',
  'key.passphrase_again': 'عبارة المرور مرة أخرى',
  'key.make_backed_up': 'أنشئ مفتاحي مع نسخة احتياطية',
  'key.backed_up': 'نُسخ احتياطياً عند إنشائه:',
  'key.no_backup':
    'لا توجد نسخة احتياطية لهذا المفتاح: إنه موجود في هذا المتصفح فقط. إن مُسحت بيانات المتصفح فلن تستطيع توقيع الدفعات للتعاقدات التي وقّعها. لا يمكن نسخ المفاتيح احتياطياً إلا عند إنشائها.',
  'key.backup_ready': 'أُنشئ مفتاحك وحُفظ هنا. نزّل نسخته الاحتياطية الآن واحفظها في مكان آمن:',
  'key.backup_download': 'نزّل النسخة الاحتياطية',
  'key.restore': 'استعد مفتاحاً من نسخته الاحتياطية',
  'key.restore_replaces':
    'الاستعادة تستبدل المفتاح الذي يحمله هذا المتصفح: إن لم تكن له نسخة احتياطية فسيُفقد.',
  'key.backup_file': 'ملف النسخة الاحتياطية',
  'key.restore_button': 'استعد المفتاح',
  'key.error.passphrase_short': 'عبارة المرور قصيرة جداً: استخدم 12 حرفاً على الأقل.',
  'key.error.passphrase_mismatch': 'عبارتا المرور مختلفتان: اكتب العبارة نفسها مرتين.',
  'key.error.backup_missing': 'اختر ملف النسخة الاحتياطية أولاً.',
  'key.error.backup_invalid': 'هذا الملف ليس نسخة احتياطية لمفتاح توقيع من هذه الوحدة.',
  'key.error.backup_passphrase': 'عبارة المرور لا تفتح هذه النسخة الاحتياطية: تحقق منها وحاول مجدداً.',
  'key.error.unsupported': 'تعذّر على هذا المتصفح إنشاء المفتاح (لا يدعم Ed25519 أو IndexedDB).',
  'key.unsupported':
    'لا يستطيع هذا المتصفح حفظ مفتاح توقيع (لا يدعم Ed25519 أو IndexedDB): استخدم متصفحاً آخر للاستئجار.',
  'market.title': 'السوق',
  'market.intro': 'المهام المعروضة والوكلاء الذين ينفذونها. الاستئجار يوقّع الاتفاقية بمفتاحك.',
  'market.empty': 'لا توجد مهام معروضة بعد. عد لاحقاً بعد استيراد الوكلاء.',
  'market.no_agents': 'لا يوجد وكيل لهذه المهمة بعد.',
  'market.per_task': 'لكل مهمة',
  'market.hire': 'استأجر {agent}',
  'market.hiring': 'جارٍ الاستئجار…',
  'market.listings': 'العروض',
  'market.no_listings': 'لم ينشر أي مزوّد عرضاً بعد.',
  'eng.title': 'التعاقدات',
  'eng.empty': 'لا توجد تعاقدات بعد. استأجر وكيلاً من السوق.',
  'eng.state.pending': 'بانتظار توقيعك',
  'eng.state.active': 'نشط',
  'eng.job': 'المهمة',
  'eng.agent': 'الوكيل',
  'eng.client_key': 'مفتاح العميل',
  'eng.price': 'السعر',
  'eng.created': 'تاريخ الاستئجار',
  'eng.state': 'الحالة',
  'eng.escrows': 'الضمانات',
  'eng.open': 'فتح',
  'sign.title': 'ما ستوقّعه',
  'sign.intro':
    'يوقّع متصفحك هذه النصوص بمفتاحك: البايتات الدقيقة هي صيغتها القانونية JCS (RFC 8785)، ويظهر تجزئتها SHA-256.',
  'sign.sla': 'اتفاقية مستوى الخدمة',
  'sign.escrow': 'الضمان {n}',
  'sign.bytes': 'البايتات القانونية (JCS)',
  'sign.hash': 'SHA-256 محسوبة في هذا المتصفح',
  'sign.hash_ok': 'تطابق التجزئة التي أعطتها الخدمة',
  'sign.hash_bad': 'تختلف عن التجزئة التي أعطتها الخدمة ({hash}): لا توقّع',
  'sign.button': 'وقّع الاتفاقية والضمان',
  'sign.signing': 'جارٍ التوقيع…',
  'sign.other_key':
    'يذكر هذا التعاقد مفتاح العميل {did}؛ وهذا المتصفح يحمل {mine}. لا يوقّعه إلا المتصفح الذي يحمل ذلك المفتاح.',
  'sign.done': 'تم التوقيع: التعاقد نشط.',
  'task.new': 'مهمة جديدة',
  'task.text': 'ماذا يفعل الوكيل؟',
  'task.run': 'شغّل المهمة',
  'task.running': 'جارٍ البدء…',
  'task.need_active': 'وقّع التعاقد أولاً: تعمل المهام على تعاقد نشط.',
  'tasks.title': 'المهام',
  'tasks.empty': 'لا توجد مهام بعد. افتح تعاقداً نشطاً وشغّل مهمة.',
  'task.title': 'مهمة',
  'task.state': 'الحالة',
  'task.events': 'التقدّم',
  'task.live': 'مباشر',
  'task.no_events': 'لا توجد أحداث بعد.',
  'task.output': 'النتيجة',
  'task.no_output': 'لا توجد نتيجة بعد.',
  'task.output_expired': 'لم تعد النتيجة محفوظة؛ يبقى الإيصال وتجزئاته.',
  'task.error': 'الخطأ',
  'task.cancel': 'ألغِ المهمة',
  'task.retry': 'أعد المحاولة',
  'task.receipt': 'الإيصال',
  'task.created': 'أُنشئت',
  'state.submitted': 'مُرسلة',
  'state.working': 'قيد التنفيذ',
  'state.input_required': 'بانتظار مدخلات',
  'state.completed': 'مكتملة',
  'state.failed': 'فشلت',
  'state.canceled': 'ملغاة',
  'state.rejected': 'مرفوضة',
  'state.pending_approval': 'بانتظار الموافقة',
  'state.approved': 'موافق عليها',
  'state.running': 'قيد الاستدعاء',
  'state.timed_out': 'انتهت مهلتها',
  'state.refused': 'مرفوضة بالسياسة',
  'event.task.created': 'أُنشئت المهمة',
  'event.task.trace': 'أفاد الوكيل',
  'event.task.state_changed': 'الحالة: {from} ← {to}',
  'error.network': 'تعذّر الوصول إلى الخدمة. تحقق من اتصالك وحاول مجدداً.',
  'error.signed_out': 'انتهت جلستك. سجّل الدخول مجدداً.',
  not_found: 'لا شيء هنا. اختر قسماً من الأعلى.',
  back: 'رجوع',
  'nav.budgets': 'الميزانيات',
  'nav.invoices': 'الفواتير',
  'nav.refunds': 'المبالغ المستردة',
  'nav.schedules': 'الجداول',
  'nav.webhooks': 'خطافات الويب',
  'col.name': 'الاسم',
  'col.limit': 'الحد',
  'col.spent': 'المصروف',
  'col.left': 'المتبقي',
  'col.period': 'الفترة',
  'col.number': 'الرقم',
  'col.issued': 'تاريخ الإصدار',
  'col.total': 'الإجمالي',
  'col.state': 'الحالة',
  'col.document': 'المستند',
  'col.created': 'تاريخ الإنشاء',
  'col.amount': 'المبلغ',
  'col.reason': 'السبب',
  'col.cron': 'التوقيت',
  'col.next': 'التشغيل القادم',
  'col.task': 'آخر مهمة',
  'col.url': 'العنوان',
  'col.events': 'الأحداث',
  'budgets.empty': 'لا توجد ميزانيات. حدّد واحدة عبر POST /api/budgets لتقييد ما تلتزم به المؤسسة شهرياً.',
  'budgets.scope.organization': 'المؤسسة كلها',
  'budgets.scope.engagement': 'تعاقد واحد',
  'budgets.scope.agent': 'وكيل واحد',
  'invoices.empty': 'لا توجد فواتير بعد. تُصدر فواتير المدفوعات المحررة عبر POST /api/invoices.',
  'invoice.issued': 'صادرة',
  'invoice.paid': 'مدفوعة',
  'invoice.pdf': 'PDF',
  'refunds.empty': 'لا توجد مبالغ مستردة. يمكن طلب استرداد دفعة محررة عبر POST /api/refunds.',
  'refund.requested': 'مطلوب',
  'refund.accepted': 'مقبول',
  'refund.settled': 'مسدد',
  'refund.rejected': 'مرفوض',
  'schedules.empty': 'لا توجد جداول. شغّل المهام وفق جدول زمني عبر POST /api/schedules.',
  'schedule.active': 'نشط',
  'schedule.paused': 'متوقف',
  'webhooks.empty': 'لا توجد خطافات ويب. اشترك بعنوان https في الأحداث عبر POST /api/webhooks.',
  'role.owner': 'مالك',
  'role.admin': 'مسؤول',
  'role.member': 'عضو',
  'role.billing': 'الفوترة',
  'role.viewer': 'مشاهد',
  // the client screens' words
  ...CLIENT_AR,
}

// the tenant screens' words (i18n-tenant.js)
Object.assign(en, TENANT_EN)
Object.assign(ar, TENANT_AR)
Object.assign(en, MARKET_EN)
Object.assign(ar, MARKET_AR)

export const CATALOGUES = { en, ar }
const KEY = 'console.lang'

/** The language: `?lang=` when given (then remembered), else the remembered one, else English. */
export function initialLang() {
  const asked = new URLSearchParams(location.search).get('lang')
  if (asked === 'en' || asked === 'ar') {
    remember(asked)
    return asked
  }
  try {
    const kept = localStorage.getItem(KEY)
    if (kept === 'en' || kept === 'ar') {
      remember(kept)
      return kept
    }
  } catch {}
  return 'en'
}

// also a cookie: signed out, /console asks the idp for its sign-in page in it (ui_locales)
export function remember(lang) {
  try {
    localStorage.setItem(KEY, lang)
  } catch {}
  document.cookie = `console_lang=${lang}; Path=/; Max-Age=31536000; SameSite=Lax${location.protocol === 'https:' ? '; Secure' : ''}`
}

/** Sets the page's language and direction (Arabic right to left). */
export function applyLang(lang) {
  document.documentElement.lang = lang
  document.documentElement.dir = lang === 'ar' ? 'rtl' : 'ltr'
  document.title = `${CATALOGUES[lang].title} · Agent rental`
}

/** A translator for `lang`: `t('key', {name: value})`. */
export const translator =
  (lang) =>
  (key, values = {}) =>
    (CATALOGUES[lang][key] ?? CATALOGUES.en[key] ?? key).replace(/\{(\w+)\}/g, (_, name) =>
      String(values[name] ?? ''),
    )

/** A role's name in the language; a custom role (data, not code) keeps its own name. */
export const roleName = (role, lang) => CATALOGUES[lang][`role.${role}`] ?? role

const locale = (lang) => (lang === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE')

/**
 * An amount of minor units as the kit's `money()` writes it: the exact decimal string (never a float
 * division) formatted by Intl in the same locale. For the routes that answer `price_fils` only;
 * where the API gives a `display`, the console shows that.
 */
export function formatFils(fils, currency, lang) {
  const value = BigInt(fils)
  const sign = value < 0n ? '-' : ''
  const digits = (value < 0n ? -value : value).toString().padStart(3, '0')
  const decimal = `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`
  return new Intl.NumberFormat(locale(lang), { style: 'currency', currency }).format(decimal)
}

/** A date and time in the browser's time zone (or `options`' own), in the person's language. */
export function formatDate(iso, lang, options = {}) {
  if (!iso) return ''
  const style = { dateStyle: 'medium', timeStyle: 'short', ...options }
  return new Intl.DateTimeFormat(locale(lang), style).format(new Date(iso))
}

// ---- client screens: numbers (counts, percentages, units) written for the language
/** A number in the language's digits and conventions (`options` as Intl.NumberFormat's). */
export function formatNumber(value, lang, options = {}) {
  return new Intl.NumberFormat(locale(lang), options).format(value)
}
