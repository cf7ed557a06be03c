// @ts-check
// The lists' words (paging and filters), in English and Arabic; merged into the catalogues of i18n.js.

export const LISTS_EN = {
  'list.pages': 'Pages of the list',
  'list.previous': 'Previous',
  'list.next': 'Next',
  'list.range': 'Rows {from}–{to}',
  'list.range_of': 'Rows {from}–{to} of {total}',
  'list.filters': 'Filters',
  'list.all': 'All',
  'list.filter_state': 'State',
  'list.filter_kind': 'Kind',
  'exec.kind.task': 'Tasks',
  'exec.kind.tool_action': 'Tool calls',
  'state.input-required': 'waiting for input',
  'session.sign_in_again': 'Sign in again',
}

export const LISTS_AR = {
  'list.pages': 'صفحات القائمة',
  'list.previous': 'السابق',
  'list.next': 'التالي',
  'list.range': 'الصفوف {from}–{to}',
  'list.range_of': 'الصفوف {from}–{to} من {total}',
  'list.filters': 'عوامل التصفية',
  'list.all': 'الكل',
  'list.filter_state': 'الحالة',
  'list.filter_kind': 'النوع',
  'exec.kind.task': 'المهام',
  'exec.kind.tool_action': 'استدعاءات الأدوات',
  'state.input-required': 'بانتظار مدخلات',
  'session.sign_in_again': 'سجّل الدخول مجدداً',
}
