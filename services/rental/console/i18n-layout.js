// @ts-check
// The layout's words (skip link, menu, the navigation's groups), in English and Arabic; merged
// into the catalogues of i18n.js.

export const LAYOUT_EN = {
  'nav.skip': 'Skip to content',
  'nav.menu': 'Menu',
  'nav.group.work': 'Work',
  'nav.group.money': 'Money',
  'nav.group.trust': 'Trust',
  'nav.group.org': 'Organization',
  'nav.wallet_statements': 'Wallet and statements',
  'nav.account': 'Your account',
  'field.required': 'Fill in this field.',
  'field.email': 'Give an email address, such as name@example.com.',
  'field.choose_engagement': 'Choose the engagement that runs these tasks.',
  'field.batch_items': 'Write at least one task, one per line.',
  'field.task_text': 'Write what the agent should do: the task needs some text.',
  'field.https_url': 'Give an address that starts with https://, for example https://example.com/hook.',
}

export const LAYOUT_AR = {
  'nav.skip': 'انتقل إلى المحتوى',
  'nav.menu': 'القائمة',
  'nav.group.work': 'العمل',
  'nav.group.money': 'المال',
  'nav.group.trust': 'الثقة',
  'nav.group.org': 'المؤسسة',
  'nav.wallet_statements': 'المحفظة والكشوف',
  'nav.account': 'حسابك',
  'field.required': 'املأ هذا الحقل.',
  'field.email': 'أدخل عنوان بريد إلكتروني، مثل name@example.com.',
  'field.choose_engagement': 'اختر التعاقد الذي ينفّذ هذه المهام.',
  'field.batch_items': 'اكتب مهمة واحدة على الأقل، مهمة في كل سطر.',
  'field.task_text': 'اكتب ما ينبغي للوكيل فعله: المهمة تحتاج إلى نص.',
  'field.https_url': 'أدخل عنواناً يبدأ بـ https://‎، مثل https://example.com/hook.',
}
