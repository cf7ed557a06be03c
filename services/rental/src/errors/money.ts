import { localisedCodes } from './localised.ts'

/** Money: escrows, schedules, invoices, budgets, refunds, disputes and insurance. */
export const moneyErrors = localisedCodes({
  // money
  insufficient_funds: {
    status: 409,
    description: 'the wallet holds less than the escrow',
    ar: 'رصيد المحفظة أقل من مبلغ الضمان.',
  },
  funding_unavailable: {
    status: 409,
    description: 'no funding provider is configured here: the wallet cannot be topped up',
    ar: 'لا يوجد مزوّد تمويل مُعدّ هنا: لا يمكن إضافة رصيد إلى المحفظة.',
  },
  escrow_not_found: {
    status: 404,
    description: 'no escrow with that hash in the engagement',
    ar: 'لا يوجد ضمان بهذه البصمة في التعاقد.',
  },
  escrow_not_open: {
    status: 409,
    description: 'the escrow is not open: sign it first',
    ar: 'الضمان غير مفتوح: وقّعه أولًا.',
  },
  task_not_completed: {
    status: 409,
    description: 'the escrow’s task has not completed',
    ar: 'مهمة هذا الضمان لم تكتمل بعد.',
  },
  instruction_mismatch: {
    status: 400,
    description: 'the release instruction is not the release of this escrow',
    ar: 'تعليمات الصرف لا تخص هذا الضمان.',
  },
  idempotency_key_reused: {
    status: 409,
    also: [422],
    description:
      'the Idempotency-Key was used for another request (422 on creating writes, 409 on a release or a retry)',
    ar: 'مفتاح عدم التكرار (Idempotency-Key) استُخدم لطلب آخر.',
  },
  idempotency_key_in_flight: {
    status: 409,
    description: 'a request with the Idempotency-Key is still running: resend it later for its answer',
    ar: 'طلب بمفتاح عدم التكرار (Idempotency-Key) نفسه ما زال قيد التنفيذ: أعد إرساله لاحقًا لتحصل على جوابه.',
  },
  invalid_account: {
    status: 400,
    description: 'not a rail account',
    ar: 'هذا ليس حسابًا صالحًا.',
  },
  invalid_transfer: {
    status: 400,
    description: 'the postings of a transfer do not balance',
    ar: 'قيود التحويل غير متوازنة.',
  },
  transfer_not_allowed: {
    status: 409,
    description:
      'the rail’s rule of money refuses the transfer: an external account not named as a source or sink, or a transfer kind or counterpart its rule does not allow (named)',
    ar: 'قواعد الأموال في نظام الدفع ترفض هذا التحويل.',
  },
  // schedules
  invalid_cron: {
    status: 400,
    description:
      'the cron expression is not 5 fields croner parses, or it never ticks (named in the message)',
    ar: 'تعبير الجدولة (cron) غير صالح أو لا يُنفَّذ أبدًا.',
  },
  invalid_timezone: {
    status: 400,
    description: 'the timezone is not an IANA time zone name',
    ar: 'المنطقة الزمنية ليست اسمًا صالحًا من قاعدة IANA.',
  },
  schedule_not_found: {
    status: 404,
    description: 'no such schedule of the organization (or it was deleted)',
    ar: 'لا يوجد جدول بهذا المعرّف لدى المؤسسة.',
  },
  schedule_not_active: {
    status: 409,
    description: 'the schedule is not active (its state named): it is not paused',
    ar: 'الجدول غير نشط، فلا يمكن إيقافه مؤقتًا.',
  },
  schedule_not_paused: {
    status: 409,
    description: 'the schedule is not paused (its state named): it is not resumed',
    ar: 'الجدول غير موقوف مؤقتًا، فلا يمكن استئنافه.',
  },
  schedule_limit: {
    status: 409,
    description: 'the organization has the most schedules allowed',
    ar: 'بلغت المؤسسة الحد الأقصى من الجداول.',
  },
  // statements, invoices and credit notes
  invalid_period: {
    status: 400,
    description: 'a statement period (from, to) that is malformed, reversed or too long',
    ar: 'فترة الكشف غير صالحة أو معكوسة أو طويلة جدًا.',
  },
  invoice_not_found: {
    status: 404,
    description: 'no such invoice of the organization',
    ar: 'لا توجد فاتورة بهذا المعرّف لدى المؤسسة.',
  },
  credit_note_not_found: {
    status: 404,
    description: 'no such credit note of the organization',
    ar: 'لا يوجد إشعار دائن بهذا المعرّف لدى المؤسسة.',
  },
  nothing_to_invoice: {
    status: 409,
    description: 'no released escrow in the period or engagement that is not on an invoice already',
    ar: 'لا يوجد ضمان مصروف غير مفوتر في هذه الفترة أو هذا التعاقد.',
  },
  invoice_paid: {
    status: 409,
    description: 'the invoice is paid already with another reference (its state named)',
    ar: 'الفاتورة مدفوعة بالفعل بمرجع آخر.',
  },
  // budgets
  budget_not_found: {
    status: 404,
    description: 'no such budget of the organization (or it was deleted)',
    ar: 'لا توجد ميزانية بهذا المعرّف لدى المؤسسة.',
  },
  budget_exceeded: {
    status: 402,
    description:
      'the escrow would take a budget past its limit in the period (the budget and what is left named)',
    ar: 'الضمان سيتجاوز حد الميزانية في هذه الفترة.',
  },
  budget_limit: {
    status: 409,
    description: 'the organization has the most budgets allowed',
    ar: 'بلغت المؤسسة الحد الأقصى من الميزانيات.',
  },
  // refunds
  refund_not_found: {
    status: 404,
    description: 'no such refund the caller may see (its client, its provider or an operator)',
    ar: 'لا يوجد استرداد بهذا المعرّف يمكنك الاطلاع عليه.',
  },
  refund_state: {
    status: 409,
    description: 'the refund’s state (named) does not allow the move',
    ar: 'حالة الاسترداد لا تسمح بهذا الإجراء.',
  },
  not_refundable: {
    status: 400,
    description: 'the escrow is not released, or the amount is above what is left to refund (named)',
    ar: 'الضمان غير مصروف، أو المبلغ أكبر مما بقي للاسترداد.',
  },
  // disputes
  dispute_not_found: {
    status: 404,
    description: 'no such dispute the caller may see (its client, its provider or an operator)',
    ar: 'لا يوجد نزاع بهذا المعرّف يمكنك الاطلاع عليه.',
  },
  dispute_state: {
    status: 409,
    description: 'the dispute’s state (named) does not allow the move',
    ar: 'حالة النزاع لا تسمح بهذا الإجراء.',
  },
  dispute_open: {
    status: 409,
    description: 'an escrow in question is in another open dispute (named)',
    ar: 'أحد الضمانات المعنية موضوع نزاع مفتوح آخر.',
  },
  not_disputable: {
    status: 409,
    description: 'nothing is held or paid for it, or the amount is above what is (named)',
    ar: 'لا يوجد مبلغ محجوز أو مدفوع لهذا، أو المبلغ أكبر من المتاح.',
  },
  escrow_frozen: {
    status: 409,
    description:
      'the escrow is frozen by an open dispute (named): it is not released, refunded or returned while the dispute is open',
    ar: 'الضمان مجمّد بسبب نزاع مفتوح: لا يُصرف حتى يُغلق النزاع.',
  },
  // insurance
  policy_not_found: {
    status: 404,
    description: 'the engagement has no insurance policy',
    ar: 'لا توجد وثيقة تأمين لهذا التعاقد.',
  },
  policy_active: {
    status: 409,
    description: 'the engagement has an active policy already (named)',
    ar: 'لدى التعاقد وثيقة تأمين سارية بالفعل.',
  },
  policy_not_active: {
    status: 409,
    description: 'the policy is not active now (its period named)',
    ar: 'وثيقة التأمين غير سارية الآن.',
  },
  premium_unpaid: {
    status: 402,
    description: 'the wallet holds less than the policy’s premium',
    ar: 'رصيد المحفظة أقل من قسط وثيقة التأمين.',
  },
  quote_required: {
    status: 400,
    description:
      'the platform prices insurance: a policy is bought with the quote_id of POST …/insurance/quote, never with a coverage or premium of the client’s (the field named)',
    ar: 'المنصة هي التي تسعّر التأمين: اطلب عرض سعر ثم اشترِه بمعرّف العرض، دون تحديد التغطية أو القسط.',
  },
  coverage_above_risk: {
    status: 400,
    description: 'the coverage asked is above the money at risk in the engagement (the cap named)',
    ar: 'التغطية المطلوبة أكبر من المال المعرّض للخطر في التعاقد.',
  },
  coverage_declined: {
    status: 409,
    description:
      'the platform declines to insure: nothing is at risk, the agent is the caller’s own, or its insurance funds cannot back the coverage (said in words)',
    ar: 'ترفض المنصة التأمين: لا مال معرّضًا للخطر، أو الوكيل تابع لمؤسستك، أو أموال التأمين لا تكفي لتغطيته.',
  },
  quote_not_found: {
    status: 404,
    description: 'no such insurance quote for this engagement of the organization',
    ar: 'لا يوجد عرض تأمين بهذا المعرّف لهذا التعاقد.',
  },
  quote_state: {
    status: 409,
    description: 'the quote is expired or bought already (its state named): ask a new one',
    ar: 'عرض التأمين منتهٍ أو اشتُري بالفعل: اطلب عرضًا جديدًا.',
  },
})
