import { localisedCodes } from './localised.ts'

/** Connect: tool servers, tool calls and the egress and web policies. */
export const connectErrors = localisedCodes({
  // connect: tool servers and tool calls
  tool_server_refused: {
    status: 400,
    description:
      'the tool server URL is refused, or the server refused the key, failed or did not answer in time (its own error named)',
    ar: 'رُفض عنوان خادم الأدوات، أو رفض الخادم المفتاح أو فشل أو لم يستجب في الوقت المحدد (خطؤه في التفاصيل).',
  },
  tool_not_available: {
    status: 400,
    description: 'a tool named is not among those the key reaches',
    ar: 'إحدى الأدوات المذكورة ليست مما يصل إليه المفتاح.',
  },
  already_connected: {
    status: 409,
    description: 'the engagement has a connection already: revoke it first',
    ar: 'لهذا الارتباط اتصال قائم: ألغِه أولًا.',
  },
  egress_refused: {
    status: 403,
    description: 'the egress policy does not reach that host and port',
    ar: 'سياسة الخروج للارتباط لا تسمح لاتصالاته الصادرة ببلوغ هذا المضيف وهذا المنفذ (سُجّل الرفض).',
  },
  web_refused: {
    status: 403,
    description:
      'the engagement’s web or egress policy refuses the page (domain, fetches per task, no policy set; recorded)',
    ar: 'سياسة الويب أو سياسة الخروج للارتباط ترفض جلب هذه الصفحة (النطاق، أو عدد مرات الجلب للمهمة، أو لا سياسة مضبوطة؛ سُجّل الرفض).',
  },
  invalid_policy: {
    status: 400,
    description: 'a domain both allowed and denied',
    ar: 'السياسة تناقض نفسها (نطاق مسموح ومحظور معًا).',
  },
  tool_refused: {
    status: 403,
    description:
      'the binding does not allow the tool, or the server offers none of that name (recorded as a refused action)',
    ar: 'الربط لا يسمح بهذه الأداة، أو لا يقدّم الخادم أداة بهذا الاسم (سُجّل الإجراء مرفوضًا).',
  },
  not_connected: {
    status: 409,
    description: 'the engagement has no connection (never bound, or revoked)',
    ar: 'لا يوجد اتصال لهذا الارتباط (لم يُربط قط، أو أُلغي).',
  },
  action_not_found: {
    status: 404,
    description: 'no such tool-call action of the organization',
    ar: 'لا يوجد إجراء استدعاء أداة بهذا المعرّف في مؤسستك.',
  },
  action_not_refreshable: {
    status: 409,
    description: 'the action’s state (named) or its tool (not idempotent) does not allow a refresh',
    ar: 'حالة الإجراء (المذكورة) أو أداته (غير القابلة للتكرار الآمن) لا تسمح بالتحديث.',
  },
  invalid_tool_credential: {
    status: 401,
    description: 'the task’s tool-call credential is missing, unknown or expired',
    ar: 'بيانات اعتماد استدعاء الأدوات للمهمة مفقودة أو غير معروفة أو منتهية.',
  },
  tool_arguments_too_large: {
    status: 413,
    description: 'the tool call’s arguments exceed RENTAL_CONNECT_MAX_ARGUMENT_BYTES',
    ar: 'معاملات استدعاء الأداة أكبر من الحد المسموح.',
  },
})
